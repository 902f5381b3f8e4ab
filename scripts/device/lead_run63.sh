#!/usr/bin/env bash
# Device run 63 (session 10, one H200): test_attention_gpu after the fused-QKV test setup became
# one helper (the flash and Hopper strided cases share it).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target test_attention_gpu > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1)
timeout 60 $T > "$OUT/ta.log" 2>&1; el "test_attention_gpu rc=$?"; grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure" "$OUT/ta.log" | cut -c1-90
