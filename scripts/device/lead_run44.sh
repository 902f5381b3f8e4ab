#!/usr/bin/env bash
# Device run 44 (lead): the remainder of the key split folded into the cuDNN range's output by
# attention_tail_merge_bf16 (one pass) instead of a cuDNN call over the last keys plus an LSE merge.
# gpu tests of attention (the kernel against its CPU reference, the dispatch both ways), golden on
# one GPU; attention_bench --split at 720p and 480p (every part timed, fold vs cuDNN tail vs native
# over all keys compared); the DiT forward, 10 layers, ABBA, VGEN_ATTN_TAIL=fold against =cudnn.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu -R "attention" --output-on-failure --timeout 190 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected|out at|lse at" "$OUT/gpu_tests.log" | head -16
A=$(find $B -name attention_bench -type f | head -1)
timeout 90 $A --split 75600 32760 > "$OUT/split.jsonl" 2>&1; el "split rc=$?"
echo "$(grep -o '"part":"[a-z_]*","S":[0-9]*\|"median_ms":[0-9.]*' "$OUT/split.jsonl" | paste -d' ' - - | sed 's/"part"://;s/"S"://;s/"median_ms"://' | tr '\n' ';')"
grep split_check "$OUT/split.jsonl"
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_ATTN_TAIL=$1 timeout 60 $D --shapes $2 --layers 10 --reps 3 --warmup 1 --no-profile --tag "tail_$1" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "$2 tail $1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r fold 720p; r cudnn 720p; r cudnn 720p; r fold 720p
r fold 480p; r cudnn 480p; r cudnn 480p; r fold 480p
el "A/B done"
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
