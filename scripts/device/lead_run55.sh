#!/usr/bin/env bash
# Device run 55 (session 9, one H200): 720p against the peer in the order vgen, peer, peer, vgen
# (ABBA), so that the GPU's warming does not favour either side (run 54 saw vgen 0.7% slower after
# the peer than before it in one call).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
source scripts/device/lead_peer_round.sh
vg 720p abba1; pe dit720; pe dit720; vg 720p abba2
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
