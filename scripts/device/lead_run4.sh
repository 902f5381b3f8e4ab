#!/usr/bin/env bash
# Device run 4 (lead, one H200): build; attention gpu tests; cuDNN SDPA at Wan-14B shapes with the
# system cuDNN and with the Python environment's newer cuDNN, heuristic choice vs autotuned, token-
# major vs heads-major q/k/v; DiT forward 720p/480p with the phase profile and GEMM epilogue stats.
# (Ran at 6a300c5 + uncommitted changes; the heads-major and VGEN_CUDNN_AUTOTUNE options it measured
# gave no gain and were removed afterwards, so this script no longer reproduces those two rows.)
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E "error" "$OUT/build.log" | head -5
(cd $B && timeout 120 ctest -L gpu -R "attention" --output-on-failure -V --timeout 100 > "$OUT/gpu_attn_tests.log" 2>&1); el "attention gpu tests"
grep -E "tests passed|Failed|SKIPPED|Skipped|skip" "$OUT/gpu_attn_tests.log" | head -12
AB=$(find $B -name attention_bench -type f | head -1)
PYCUDNN=$(python3 -c "import nvidia.cudnn as m, os; print(os.path.join(m.__path__[0], 'lib'))" 2>/dev/null)
echo "python cudnn: $PYCUDNN"; ls "$PYCUDNN" 2>/dev/null | head -3
run_ab() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 120 $AB --cudnn-only 75600 32760 > "$OUT/ab_$tag.log" 2>&1; el "attention $tag rc=$?"
  grep -o '"cudnn_version":[0-9]*\|"backend":"[a-z_]*","S":[0-9]*,"H":40,"D":128,"dtype":"bf16","lse":[a-z]*,"status":"[a-z]*"\|"tflops":[0-9.]*\|out_max_abs_vs_cudnn":[0-9.e+-]*' "$OUT/ab_$tag.log" | paste -sd' ' | sed 's/"backend"/\n"backend"/g'
}
run_ab sys914
run_ab sys914_tune VGEN_CUDNN_AUTOTUNE=1
if [ -n "$PYCUDNN" ]; then
  run_ab py LD_LIBRARY_PATH=$PYCUDNN:$LD_LIBRARY_PATH
  run_ab py_tune LD_LIBRARY_PATH=$PYCUDNN:$LD_LIBRARY_PATH VGEN_CUDNN_AUTOTUNE=1
fi
D=$(find $B -name vgen_dit_bench -type f | head -1)
timeout 150 $D --shapes 720p,480p --layers 40 --reps 2 --warmup 1 > "$OUT/dit_single.log" 2>&1; el "dit rc=$?"
grep "^#" "$OUT/dit_single.log"; grep -o '"gemm_calls":[0-9]*,"gemm_unfused":[0-9]*' "$OUT/dit_single.log"
