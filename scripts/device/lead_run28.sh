#!/usr/bin/env bash
# Device run 28 (lead, one H200): overlap experiments at 720p (10 layers, median of 3 each, order
# balanced ABCDDCBA): VGEN_DIT_OVERLAP=1 runs the Q/K RMSNorm+RoPE on a side stream beside the K/V
# GEMMs; VGEN_ATTN_SIDE=1 runs the 80-key remainder attention beside the main key range.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target vgen vgen_dit_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
for p in bf16; do VGEN_DIT_OVERLAP=1 VGEN_ATTN_SIDE=1 timeout 60 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden overlap $p: $(tail -1 "$OUT/golden_$p.log")"; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_DIT_OVERLAP=$1 VGEN_ATTN_SIDE=$2 timeout 100 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "ov$1side$2" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "ov=$1 side=$2 $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r 0 0; r 1 0; r 0 1; r 1 1; r 1 1; r 0 1; r 1 0; r 0 0
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
