#!/usr/bin/env bash
# Device run 58 (session 10, one H200): Hopper attention variants at 720p: 1 (fast softmax), 4 (probe:
# no exponential), 5 (Q in registers), 6 (Q in registers + ping-pong); clocks and power while it runs.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target attention_bench test_attention_gpu > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error|C75" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1); A=$(find $B -name attention_bench -type f | head -1)
for v in 5 6; do
  VGEN_WGMMA_VARIANT=$v timeout 120 $T --gtest_filter='*Wgmma*' > "$OUT/t$v.log" 2>&1; el "variant $v test rc=$?"; grep -E "FAILED|Failure" "$OUT/t$v.log" | head -3
done
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$OUT/smi.csv" &
SMI=$!
for v in 1 4 5 6 6 5 4 1; do
  echo "v$v start $(date +%T.%N | cut -c1-12)" >> "$OUT/marks.txt"
  VGEN_WGMMA_VARIANT=$v timeout 100 $A --cudnn-only --wgmma --lse-seq 1 75600 > "$OUT/b.jsonl" 2>> "$OUT/a.err"
  echo "v$v $(grep -h '"median_ms"' "$OUT/b.jsonl" | python3 -c "
import json,sys
print(' '.join('%s %.2f ms %.0f TF' % (j['backend'], j['median_ms'], j['tflops']) for j in map(json.loads, sys.stdin)))") $(grep -h check_wgmma "$OUT/b.jsonl" | cut -c60-130)"
done
kill $SMI
python3 - "$OUT/smi.csv" <<'PY'
import sys
rows=[l.strip().split(', ') for l in open(sys.argv[1]) if l.strip()]
busy=[r for r in rows if float(r[2].split()[0])>300]
import statistics as st
if busy:
  print('samples>300W', len(busy), 'sm MHz median', st.median(float(r[1].split()[0]) for r in busy), 'power W median', st.median(float(r[2].split()[0]) for r in busy), 'max', max(float(r[2].split()[0]) for r in busy))
PY
for v in 1 5; do VGEN_WGMMA_VARIANT=$v timeout 100 $A --cudnn-only --wgmma --lse-seq 1 32760 | grep -h '"wgmma"' | cut -c1-200; done
el done
