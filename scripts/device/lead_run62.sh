#!/usr/bin/env bash
# Device run 62 (session 10, one H200): after the review fixes (immediate named-barrier ids, probe
# through a device symbol, scale > 0 required, tensor-map refusal falls back): the attention gtest
# cases, the DiT gpu test, and the 720p attention timing against cuDNN.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target attention_bench test_attention_gpu test_attention_cudnn_gpu test_dit_forward_gpu > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1); C=$(find $B -name test_attention_cudnn_gpu -type f | head -1)
F=$(find $B -name test_dit_forward_gpu -type f | head -1); A=$(find $B -name attention_bench -type f | head -1)
timeout 60 $T > "$OUT/ta.log" 2>&1; el "test_attention_gpu rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|Failure" "$OUT/ta.log" | cut -c1-90
timeout 60 $C --gtest_filter='*Dispatch*:*Honoured*:*Unsupported*' > "$OUT/tc.log" 2>&1; el "cudnn dispatch tests rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED) +\]" "$OUT/tc.log" | cut -c1-90
timeout 60 $F > "$OUT/tf.log" 2>&1; el "test_dit_forward_gpu rc=$?"; tail -1 "$OUT/tf.log"
timeout 60 $A --cudnn-only --wgmma --lse-seq 1 75600 > "$OUT/b.jsonl" 2>&1; el "bench rc=$?"; grep -h '"median_ms"\|check_wgmma' "$OUT/b.jsonl" | cut -c1-220
el done
