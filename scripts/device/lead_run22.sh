#!/usr/bin/env bash
# Device run 22 (lead, one H200): is cuDNN SDPA with the LSE output slower, or was it measured
# second (hotter)? 75,600 queries, keys 75,520 / 75,648 / 75,600, alternating with/without LSE
# in one process (attention_bench --lse-seq).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
AB=$(find $B -name attention_bench -type f | head -1)
ab() { echo "== $*"; timeout 90 $AB --cudnn-only "$@" 2>&1 | grep -o '"Skv":.*"tflops":[0-9.]*' | sed 's/"H":40,"D":128,"dtype":"bf16",//'; }
ab --kv 75520 --lse-seq 10011001 75600; ab --kv 75648 --lse-seq 1001 75600; ab --lse-seq 1001 75600
el "attention"
