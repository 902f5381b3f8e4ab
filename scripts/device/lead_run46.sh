#!/usr/bin/env bash
# Device run 46 (lead, two H200s): issue 7's two-GPU speedups with the key split's remainder folded
# in (0717f68; each rank's local key range has a remainder under ring and attn2d too): 720p, 40
# layers, median of 3, one GPU then each 2-GPU mode; then a third round against the peer on GPU 0.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
source scripts/device/lead_peer_round.sh
vg 480p,720p round3
unset CUDA_VISIBLE_DEVICES
M="mpirun -np 2 --bind-to none"
for m in ring attn2d ulysses cfg; do
  timeout 80 $M $D --mode $m --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --tag $m --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_$m.log" 2>&1; el "$m"; grep "^#.*tokens\|error" "$OUT/dit_$m.log" | head -3
done
export CUDA_VISIBLE_DEVICES=0
pe dit480 dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
