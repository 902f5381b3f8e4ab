#!/usr/bin/env bash
# Device run 33 (lead, one H200): the residual adds in the GEMM epilogues (cuBLASLt's C in place; the
# self-attention and FFN gates folded into per-sample copies of the weight rows). All gpu tests,
# vgen golden fp32/bf16 on one GPU, then 720p 10 layers in-epilogue vs in-norm residuals (ABBAABBA).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected|residual in gemm" "$OUT/gpu_tests.log" | head -12
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep -E "FAIL|dit_forward" "$OUT/golden_$p.log" | head -4; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile $1 --tag "ab$2" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "$2 $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r "" gemm; r --separate-residual norm; r --separate-residual norm; r "" gemm; r "" gemm; r --separate-residual norm; r --separate-residual norm; r "" gemm
timeout 60 $D --shapes 720p --layers 10 --reps 1 --warmup 1 --tag profile_gemm --out "$OUT/dit.jsonl" > "$OUT/p.log" 2>&1; grep -E "gemm|other|attention" "$OUT/p.log" | head -8
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
