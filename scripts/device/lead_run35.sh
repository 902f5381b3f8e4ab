#!/usr/bin/env bash
# Device run 35 (lead, one H200, the machine of run 34 when still warm): the second round of vgen and
# the diffusers peer, in the other order (720p first).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target vgen_dit_bench > "$OUT/build.log" 2>&1; el "build rc=$?"
source scripts/device/lead_peer_round.sh
vg 720p,480p round2; pe dit720 dit480
el done
