#!/usr/bin/env bash
# Device run 23 (lead, one H200): cuBLASLt's GELU+bias epilogue for the FFN1 GEMM (vgen_dit_bench
# --fused-gelu now sets kern::gemm_set_gelu_epilogue) with and without autotuning, against the
# separate GELU pass, DiT 720p 10 layers, alternated.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target vgen_dit_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
D=$(find $B -name vgen_dit_bench -type f | head -1)
for f in "" "--fused-gelu" "--fused-gelu --gemm-tune 16" "" "--fused-gelu"; do
  timeout 100 $D --shapes 720p --layers 10 --reps 3 --warmup 1 $f --out "$OUT/dit.jsonl" > "$OUT/dit.log" 2>&1; el "dit [$f] rc=$?"; grep "^#" "$OUT/dit.log" | grep -v "^# NVIDIA" | grep -v "tune 512\|x64"
done
