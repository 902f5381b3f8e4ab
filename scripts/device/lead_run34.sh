#!/usr/bin/env bash
# Device run 34 (lead, one H200): the key-split merge as one thread per 8 columns (16-byte accesses)
# and in place over the first range's output, plus the residual-in-GEMM test bound. The changed gpu
# tests (GEMM, attention, DiT forward with its printout), vgen golden fp32/bf16 on one GPU, then 720p
# 10 layers with the new merge vs the warp-per-row merge (VGEN_EXP_MERGE_SCALAR, ABBA), then one round
# of vgen and the diffusers peer at 480p and 720p (40 layers; the second round is lead_run35.sh).
# VGEN_EXP_MERGE_SCALAR was an experiment switch of this run's tree only (the old warp-per-row path),
# not committed: rerun on fc29a1c or later, both arms measure the 16-byte kernel.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu -R "gemm_gpu|attention|dit_forward|dit_kernels" --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected" "$OUT/gpu_tests.log" | head -12
T=$(find $B -name test_dit_forward_gpu -type f | head -1); timeout 100 $T --gtest_filter='*Residual*:*RandomWeights*' 2>&1 | grep -E "^\[dit|OK|FAILED" | head
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep -E "FAIL|dit_forward  " "$OUT/golden_$p.log" | head -4; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { env $1 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "merge_$2" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "$2 $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r X=1 vec8; r VGEN_EXP_MERGE_SCALAR=1 warp; r VGEN_EXP_MERGE_SCALAR=1 warp; r X=1 vec8
el "merge A/B done"
source scripts/device/lead_peer_round.sh
vg 480p,720p round1; pe dit480 dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
