#!/usr/bin/env bash
# Device run 54 (session 9, one H200): what a forward cut short by the first-block cache costs at
# 720p (40 layers, random weights, the cut forced) against a full one, then one more round against
# the peer (vgen, peer, vgen).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
source scripts/device/lead_peer_round.sh
timeout 150 $D --shapes 480p,720p --layers 40 --reps 3 --warmup 1 --no-profile --first-block-cache --tag fbcache --out "$OUT/vgen_dit.jsonl" > "$OUT/fb.log" 2>&1; el "fbcache rc=$?"; grep "^#" "$OUT/fb.log"
pe dit720
vg 720p round4
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
