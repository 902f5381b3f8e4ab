#!/usr/bin/env bash
# Device run 7 (lead, one H200): build; cuDNN attention gpu test (verbose failures); cuDNN SDPA rate
# against the key count (is a long key range slower per FLOP?); DiT 720p (10 layers) with key
# chunking off/on at several chunk sizes.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_cudnn_gpu -type f | head -1)
timeout 120 $T > "$OUT/cudnn_test.log" 2>&1; el "cudnn test rc=$?"; grep -E "Failure|FAILED|expected|Which is|rel-L2|max \||lse\[|OK \]|PASSED" "$OUT/cudnn_test.log" | head -30
AB=$(find $B -name attention_bench -type f | head -1)
ab() { timeout 60 $AB --cudnn-only "$@" 2>&1 | grep -o '"backend":"cudnn","S":[0-9]*,"Skv":[0-9]*,"H":[0-9]*,"D":128,"dtype":"bf16","lse":true,"status":"ok","reps":5,"median_ms":[0-9.]*,"tflops":[0-9.]*'; }
ab --heads 16 16384; ab --heads 40 16384; ab 75600; ab 75648; ab --kv 37800 75600; ab --kv 18944 75600; ab --kv 15232 75600; ab --kv 9472 75600; ab --kv 4736 75600
el "attention bench"
D=$(find $B -name vgen_dit_bench -type f | head -1)
for c in 0 19000 15200 9500; do
  VGEN_ATTN_KV_CHUNK=$c timeout 60 $D --shapes 720p --layers 10 --reps 2 --warmup 1 > "$OUT/dit_chunk$c.log" 2>&1; el "dit chunk $c rc=$?"; grep "^#.*720p" "$OUT/dit_chunk$c.log"
done
