#!/usr/bin/env bash
# Device run 32 (lead, two H200s): DWDP layout policy (whole blocks run in place for two ranks,
# 2 MiB slices from three on): dwdp_np2 bit identity, vgen golden bf16 with dwdp 2, and the cost at
# 480p cfg 2 (dwdp 1 / 2 / 2 / 1, 40 layers, median of 3).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 100 ctest -R dwdp --output-on-failure > "$OUT/dwdp_tests.log" 2>&1); el "dwdp tests: $(grep 'tests passed' "$OUT/dwdp_tests.log")"; grep -E "parity|Failed" "$OUT/dwdp_tests.log" | head
M="mpirun -np 2 --bind-to none"
for s in cfg_size ulysses_size; do timeout 40 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set parallel_config.$s=2 --set parallel_config.dwdp_size=2 > "$OUT/g.log" 2>&1; el "golden bf16 $s=2 dwdp 2: $(tail -1 "$OUT/g.log")"; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { timeout 75 $M $D --mode cfg --dwdp $1 --shapes 480p --layers 40 --reps 3 --warmup 1 --no-profile --tag "dwdp$1" --out "$OUT/vgen_dit.jsonl" > "$OUT/d.log" 2>&1; el "cfg 480p dwdp $1 rc=$?: $(grep -o '[0-9.]* GiB of weights\|[0-9.]* s per forward pair' "$OUT/d.log" | paste -sd' ')"; }
r 1; r 2; r 2; r 1
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
