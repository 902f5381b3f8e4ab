#!/usr/bin/env bash
# Device run 52 (session 9, one H200): speed of the two tail kernels and of the hoisted RoPE tables
# in the DiT (720p, 10 layers, order ABCDDCBA), attention_bench --split both ways, then one round
# against the peer (40 layers) with vgen's default and with the tail kernel's QBUF=1.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
A=$(find $B -name attention_bench -type f | head -1)
for q in 2 1 1 2; do
  VGEN_EXP_TAIL_QBUF=$q timeout 60 $A --split 75600 > "$OUT/split_q$q.jsonl" 2>&1
  echo "QBUF=$q: $(python3 -c "import json,sys; print('; '.join(f\"{j['part']} {j['median_ms']}\" for j in (json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')) if j.get('bench') == 'attention_split' and j['part'] in ('tail_fold', 'merge', 'tail_cudnn')))" "$OUT/split_q$q.jsonl")"
done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_EXP_TAIL_QBUF=$1 VGEN_EXP_ROPE_NO_HOIST=$2 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "q$1_nohoist$2" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "720p QBUF=$1 NO_HOIST=$2: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r 2 1; r 1 1; r 2 0; r 1 0; r 1 0; r 2 0; r 1 1; r 2 1
el "ABBA done"
source scripts/device/lead_peer_round.sh
vg 720p default; pe dit720; VGEN_EXP_TAIL_QBUF=1 vg 720p qbuf1
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
