#!/usr/bin/env bash
# Device run 61 (session 10, one H200): the Hopper attention's gtest cases listed one by one; 480p
# against the peer (ABBA); 720p vgen with auto (Hopper kernel) against vgen with cudnn (key split)
# around a third peer round.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1); C=$(find $B -name test_attention_cudnn_gpu -type f | head -1)
timeout 60 $T > "$OUT/ta.log" 2>&1; el "test_attention_gpu rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED) +\]" "$OUT/ta.log" | cut -c1-80
timeout 90 $C > "$OUT/tc.log" 2>&1; el "test_attention_cudnn_gpu rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED) +\]" "$OUT/tc.log" | cut -c1-80
source scripts/device/lead_peer_round.sh
vg 480p abba1; pe dit480; pe dit480; vg 480p abba2
vgc() { timeout 110 $D --shapes $1 --layers 40 --reps 3 --warmup 1 --no-profile --attention cudnn --tag "$2" --out "$OUT/vgen_dit.jsonl" > "$OUT/v.log" 2>&1; el "vgen cudnn $1 $2 rc=$?"; grep "^#.*tokens" "$OUT/v.log"; }
vg 720p r1; vgc 720p c1; pe dit720; vgc 720p c2; vg 720p r2
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
