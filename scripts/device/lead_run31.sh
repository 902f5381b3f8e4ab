#!/usr/bin/env bash
# Device run 31 (lead, two H200s): DWDP with whole blocks per owner (575833e, the tree carried as
# ab_old_575833e.tar.gz) against 2 MiB slices dealt round-robin (d798a28), same call, order ABBA:
# 480p cfg 2 and 720p ulysses 2 with dwdp 2, 40 layers, median of 3.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
mkdir -p /tmp/old && tar xzf ab_old_575833e.tar.gz -C /tmp/old && ln -sfn $ROOT/.dev /tmp/old/.dev
VGEN_GPU_BUILD=/tmp/old/build bash /tmp/old/scripts/device/gpu_check.sh --configure-only > "$OUT/configure_old.log" 2>&1
(cmake --build $B -j 16 --target vgen_dit_bench > "$OUT/build.log" 2>&1; echo "new rc=$?" >> "$OUT/rc") &
(cmake --build /tmp/old/build -j 16 --target vgen_dit_bench > "$OUT/build_old.log" 2>&1; echo "old rc=$?" >> "$OUT/rc") &
wait; el "$(cat "$OUT/rc" | tr '\n' ' ')"
DN=$(find $B -name vgen_dit_bench -type f | head -1); DO=$(find /tmp/old/build -name vgen_dit_bench -type f | head -1)
M="mpirun -np 2 --bind-to none"
r() { timeout 75 $M $2 --mode $3 --dwdp 2 --shapes $4 --layers 40 --reps 3 --warmup 1 --no-profile --tag "$1" --out "$OUT/vgen_dit.jsonl" > "$OUT/d.log" 2>&1; el "$1 $3 $4 rc=$?: $(grep -o '[0-9.]* s per forward[ a-z()]*' "$OUT/d.log")"; }
r whole $DO cfg 480p; r slices $DN cfg 480p; r slices $DN cfg 480p; r whole $DO cfg 480p
r whole $DO ulysses 720p; r slices $DN ulysses 720p
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
