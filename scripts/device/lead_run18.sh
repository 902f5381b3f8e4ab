#!/usr/bin/env bash
# Device run 18 (lead, two H200s): DWDP - the 2-rank parity test (split model = whole model, bit
# for bit, 5 blocks so the slots refill), vgen golden bf16 on two GPUs with dwdp 2 (cfg 2, ulysses
# 2) and one GPU, and the DiT forward pair at 480p (cfg 2) with and without dwdp 2.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target vgen vgen_dit_bench dwdp_test > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
M="mpirun -np 2 --bind-to none"
timeout 60 $M $(find $B -name dwdp_test -type f | head -1) > "$OUT/dwdp_test.log" 2>&1; el "dwdp_test rc=$?"; tail -3 "$OUT/dwdp_test.log"
for s in "parallel_config.cfg_size=2 --set parallel_config.dwdp_size=2" "parallel_config.ulysses_size=2 --set parallel_config.dwdp_size=2"; do
  timeout 30 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"; grep -E "FAIL|rror" "$OUT/g.log" | head -3
done
timeout 20 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 > "$OUT/g1.log" 2>&1; el "golden 1 GPU bf16: $(tail -1 "$OUT/g1.log")"
D=$(find $B -name vgen_dit_bench -type f | head -1)
for d in 1 2; do
  timeout 60 $M $D --mode cfg --dwdp $d --shapes 480p --layers 40 --reps 3 --warmup 1 --no-profile --out "$OUT/dwdp$d.jsonl" > "$OUT/dit_dwdp$d.log" 2>&1; el "cfg dwdp $d rc=$?"; grep "^#\|rror" "$OUT/dit_dwdp$d.log" | head -4
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
