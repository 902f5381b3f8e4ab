#!/usr/bin/env bash
# Device run 60 (session 10, one H200): the Hopper attention kernel as the default of auto/native:
# every gpu test, vgen golden fp32/bf16, then the 40-layer DiT forward at 720p against the peer in
# ABBA order (vgen, peer, peer, vgen).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 250 ctest -L gpu -j 2 --output-on-failure --timeout 200 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected|Not Run" "$OUT/gpu_tests.log" | head -16
for p in fp32 bf16; do timeout 60 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
source scripts/device/lead_peer_round.sh
vg 720p abba1; pe dit720; pe dit720; vg 720p abba2
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
