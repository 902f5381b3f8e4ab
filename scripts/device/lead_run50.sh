#!/usr/bin/env bash
# Device run 50 (prepared in session 8; one H200): the tail kernel with one Q tile per warp
# (VGEN_EXP_TAIL_QBUF=1: two blocks per SM at 80 keys) against the default two (session 8 measured
# the default at ~2.5 TB/s, 0.86-1.03 ms at 720p; bandwidth-bound would be ~0.55 ms). The attention
# gpu tests with the switch; attention_bench --split both ways; the DiT at 720p, 10 layers, ABBA.
# Keep the faster one as the only path (and drop the switch), or drop QB 1 if it is not faster.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && VGEN_EXP_TAIL_QBUF=1 timeout 150 ctest -L gpu -R "attention" --output-on-failure --timeout 140 > "$OUT/gpu_tests_q1.log" 2>&1); el "gpu tests QBUF=1: $(grep 'tests passed' "$OUT/gpu_tests_q1.log")"
grep -E "\(Failed\)|Failure|out at|lse at" "$OUT/gpu_tests_q1.log" | head -8
A=$(find $B -name attention_bench -type f | head -1)
for q in 2 1 1 2; do
  VGEN_EXP_TAIL_QBUF=$q timeout 60 $A --split 75600 > "$OUT/split_q$q.jsonl" 2>&1
  echo "QBUF=$q: $(python3 -c "import json,sys; print('; '.join(f\"{j['part']} {j['median_ms']}\" for j in (json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')) if j.get('bench') == 'attention_split' and j['part'] in ('tail_fold', 'merge', 'tail_cudnn')))" "$OUT/split_q$q.jsonl")"
done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_EXP_TAIL_QBUF=$1 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "qbuf$1" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "720p QBUF=$1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r 2; r 1; r 1; r 2
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
