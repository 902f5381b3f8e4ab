#!/usr/bin/env bash
# (The experiment switches this run used were removed again: see results/README.md, runs 39-42.)
# Device run 42 (lead, one H200): does cuDNN offer a faster SDPA plan than its heuristic's first
# choice? The experiment switch VGEN_EXP_CUDNN_PLAN builds every plan of heuristics A, B and
# FALLBACK for the big self-attention graphs and runs the i-th. attention_bench at 720p (75,600
# queries x 75,520 keys, LSE) per plan, then the DiT at 720p (10 layers) with the fastest plan
# against the heuristic's choice, ABBA.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
A=$(find $B -name attention_bench -type f | head -1)
a() { VGEN_EXP_CUDNN_PLAN=$1 timeout 40 $A --cudnn-only --kv 75520 --lse-seq 1 75600 > "$OUT/a.log" 2>&1; ms=$(grep -o '"median_ms":[0-9.]*' "$OUT/a.log" | tail -1 | cut -d: -f2); echo "plan $1: ${ms:-fail} $(grep -v '^#' "$OUT/a.log" | grep -v attention_device | grep -v median_ms | head -2)"; echo "$1 ${ms:-9999}" >> "$OUT/plans.txt"; }
a -1; grep "^# " "$OUT/a.log"
N=$(grep -o "^# cudnn plans: [0-9]*" "$OUT/a.log" | grep -o "[0-9]*$"); N=${N:-1}; [ "$N" -gt 8 ] && N=8
for i in $(seq 0 $((N-1))); do a $i; done
for i in $(seq $((N-1)) -1 0); do a $i; done
a -1
el "plans done"
BEST=$(grep -v "^-1" "$OUT/plans.txt" | sort -k2 -n | head -1 | cut -d' ' -f1); echo "best plan $BEST"
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_EXP_CUDNN_PLAN=$1 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "plan$1" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "dit plan $1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r -1; r $BEST; r $BEST; r -1
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
