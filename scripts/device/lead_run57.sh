#!/usr/bin/env bash
# Device run 57 (session 10, one H200): the Hopper attention kernel's variants (VGEN_WGMMA_VARIANT
# 0 plain, 1 ftz exp2 + rescale only when a max moved, 3 ping-pong, 2 both): gpu test each, then
# attention_bench at 720p against cuDNN, and the current dispatch (split + tail fold) for reference.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target attention_bench test_attention_gpu > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error|C75" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1); A=$(find $B -name attention_bench -type f | head -1)
for v in 0 1 3 2; do
  VGEN_WGMMA_VARIANT=$v timeout 120 $T --gtest_filter='*Wgmma*' > "$OUT/t$v.log" 2>&1; el "variant $v test rc=$?"; grep -E "FAILED|Failure" "$OUT/t$v.log" | head -3
done
for v in 0 1 3 2 2 3 1 0; do
  VGEN_WGMMA_VARIANT=$v timeout 100 $A --cudnn-only --wgmma --lse-seq 1 75600 > "$OUT/b.jsonl" 2>> "$OUT/a.err"
  echo "v$v $(grep -h '"median_ms"' "$OUT/b.jsonl" | python3 -c "
import json,sys
print(' '.join('%s %.2f ms %.0f TF' % (j['backend'], j['median_ms'], j['tflops']) for j in map(json.loads, sys.stdin)))")"
done
timeout 100 $A --split 75600 > "$OUT/split.jsonl" 2>> "$OUT/a.err"; grep -h '"whole"\|main_cudnn' "$OUT/split.jsonl" | cut -c1-200
VGEN_WGMMA_VARIANT=2 timeout 100 $A --cudnn-only --wgmma --lse-seq 1 32760 | grep -h 'wgmma' | cut -c1-250
el done
