#!/usr/bin/env bash
# Device run 53 (session 9, one H200): the tail kernel with one Q buffer as its only path and the
# hoisted RoPE tables without their switches: the attention and DiT kernel gpu tests, golden bf16,
# then two rounds against the peer (40 layers, interleaved).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 150 ctest -L gpu -R "attention|dit_kernels" --output-on-failure --timeout 140 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|out at|lse at" "$OUT/gpu_tests.log" | head -8
timeout 60 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 > "$OUT/golden_bf16.log" 2>&1; el "golden bf16: $(tail -1 "$OUT/golden_bf16.log")"
source scripts/device/lead_peer_round.sh
vg 480p,720p round1; pe dit480 dit720
vg 720p round2; pe dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
