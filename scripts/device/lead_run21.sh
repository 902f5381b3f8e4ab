#!/usr/bin/env bash
# Device run 21 (lead, one H200): cuDNN SDPA at 75,600 queries with and without the LSE output, for
# the key counts the single-GPU path could use: 75,600 as is, 75,520 (the split's main range),
# 75,648 unmasked, and 75,648 with a padding mask over 75,600 - twice, interleaved.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
AB=$(find $B -name attention_bench -type f | head -1)
ab() { echo "== $*"; timeout 60 $AB --cudnn-only "$@" 2>&1 | grep -o '"Skv":.*"tflops":[0-9.]*' | tail -2; }
for i in 1 2; do ab --kv 75520 75600; ab 75600; ab --kv 75648 --valid 75600 75600; ab --kv 75648 75600; done
el "attention"
