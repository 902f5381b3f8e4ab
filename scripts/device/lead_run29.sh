#!/usr/bin/env bash
# Device run 29 (lead, two H200s): the row-kernel helpers shared by norm.cu and rope.cu (review items
# D3/D5) under every gpu test; vgen golden fp32/bf16 on one GPU; DWDP at 720p (40 layers, median of
# 3): cfg 2 and ulysses 2, each with and without dwdp 2, in one call.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Timeout" "$OUT/gpu_tests.log" | head -12
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep FAIL "$OUT/golden_$p.log" | head -3; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
M="mpirun -np 2 --bind-to none"
for m in cfg ulysses; do for w in 1 2; do
  timeout 75 $M $D --mode $m --dwdp $w --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --tag "dwdp$w" --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_${m}_$w.log" 2>&1; el "$m dwdp $w rc=$?"; grep "^#\|error" "$OUT/dit_${m}_$w.log" | head -3
done; done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
