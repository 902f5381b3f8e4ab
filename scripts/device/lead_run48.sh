#!/usr/bin/env bash
# Device run 48 (lead): one more round against the peer with the staged fold kernel (run 47's tree).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
source scripts/device/lead_peer_round.sh
vg 480p,720p round4; pe dit480 dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
