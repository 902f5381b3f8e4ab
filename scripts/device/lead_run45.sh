#!/usr/bin/env bash
# Device run 45 (lead): vgen at 0717f68 (the key split's remainder folded in one pass) against the
# diffusers peer, two interleaved rounds at 480p and 720p on GPU 0 (40 layers, warm-up 1, median of
# 3, as the peer times); first one profiled 720p forward of 10 layers (phases).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
source scripts/device/lead_peer_round.sh
timeout 60 $D --shapes 720p --layers 10 --reps 2 --warmup 1 --tag profile --out "$OUT/profile.jsonl" > "$OUT/p.log" 2>&1; el "profile rc=$?"; grep "^#" "$OUT/p.log"
vg 480p,720p round1; pe dit480 dit720
vg 480p,720p round2; pe dit480 dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
