#!/usr/bin/env bash
# (The experiment switches this run used were removed again: see results/README.md, runs 39-42.)
# Device run 40 (lead, one H200): where the last percent of the 720p DiT is. (1) attention_bench
# --split 75600 / 32760: the 128-aligned main cuDNN call, the remainder call (cuDNN and native), the
# LSE merge and the whole dispatch, each timed alone. (2) vgen_dit_bench 720p, 10 layers, profiled,
# with the i-th cuBLASLt heuristic (experiment switch VGEN_GEMM_ALGO) for i = 0..5 and 0 again.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
A=$(find $B -name attention_bench -type f | head -1)
timeout 100 $A --split 75600 32760 > "$OUT/split.jsonl" 2>&1; el "split"; cat "$OUT/split.jsonl" | grep -v device
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_GEMM_ALGO=$1 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --tag "algo$1" --out "$OUT/dit.jsonl" > "$OUT/d$1.log" 2>&1; echo "algo $1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1) $(grep -i 'gemm' "$OUT/d$1.log" | grep -v '^# gemm M' | head -3 | tr '\n' ' ')"; grep '^# gemm M' "$OUT/d$1.log" | sort -u | head -12; }
r 0; r 1; r 2; r 3; r 4; r 5; r 0
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
