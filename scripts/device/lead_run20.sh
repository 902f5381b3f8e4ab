#!/usr/bin/env bash
# Device run 20 (lead, one H200): cuBLASLt autotuning (kern::gemm_set_autotune, vgen_dit_bench
# --gemm-tune N) against the heuristic's first choice in the DiT at 720p (10 layers, alternated);
# cuDNN SDPA for the split's 80-key remainder and its main range.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target vgen_dit_bench attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
D=$(find $B -name vgen_dit_bench -type f | head -1)
for t in 0 16 0 16; do
  timeout 100 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --gemm-tune $t --out "$OUT/dit.jsonl" > "$OUT/dit_$t.log" 2>&1; el "dit tune $t rc=$?"; grep "^#" "$OUT/dit_$t.log" | grep -v "^# NVIDIA"
done
AB=$(find $B -name attention_bench -type f | head -1)
ab() { timeout 60 $AB --cudnn-only "$@" 2>&1 | grep -o '"S":.*"tflops":[0-9.]*' | tail -2; }
ab --kv 80 75600; ab --kv 128 75600; ab --kv 75520 75600
el "attention"
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
