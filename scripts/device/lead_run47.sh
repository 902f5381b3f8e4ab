#!/usr/bin/env bash
# Device run 47 (lead): the folded remainder kernel with out staged through shared memory (cp.async
# in, merged in place, 16-byte row stores) instead of 4-byte fragment accesses. gpu tests of
# attention; attention_bench --split at 720p (fold against the cuDNN tail + merge it replaces);
# the DiT forward at 720p, 10 layers, ABBA, VGEN_ATTN_TAIL=fold against =cudnn.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 150 ctest -L gpu -R "attention" --output-on-failure --timeout 140 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected|out at|lse at" "$OUT/gpu_tests.log" | head -16
A=$(find $B -name attention_bench -type f | head -1)
timeout 60 $A --split 75600 > "$OUT/split.jsonl" 2>&1; el "split rc=$?"
echo "$(grep -o '"part":"[a-z_]*","S":[0-9]*\|"median_ms":[0-9.]*' "$OUT/split.jsonl" | paste -d' ' - - | sed 's/"part"://;s/"S"://;s/"median_ms"://' | tr '\n' ';')"
grep split_check "$OUT/split.jsonl"
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_ATTN_TAIL=$1 timeout 60 $D --shapes $2 --layers 10 --reps 3 --warmup 1 --no-profile --tag "tail_$1" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "$2 tail $1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r fold 720p; r cudnn 720p; r cudnn 720p; r fold 720p
el "A/B done"
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
