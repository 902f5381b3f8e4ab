#!/usr/bin/env bash
# Device run 1 (lead): build, gpu tests, kernel + DiT benches at few layers. Logs to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build-gpu
export LD_LIBRARY_PATH=$PWD/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bash scripts/device/gpu_check.sh --configure-only > "$OUT/configure.log" 2>&1; tail -5 "$OUT/configure.log"
t0=$(date +%s)
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 ))s"; grep -E "error" "$OUT/build.log" | head -20
cd $B
timeout 240 ctest -L gpu --output-on-failure --timeout 120 > "$OUT/gpu_tests.log" 2>&1
grep -E "tests passed|Passed|Failed|\*\*\*|Skipped" "$OUT/gpu_tests.log" | tail -40
[ -x bin/vgen ] && timeout 120 ./bin/vgen golden --fixtures ../tests/golden --set device=cuda > "$OUT/golden_cuda_fp32.log" 2>&1; tail -3 "$OUT/golden_cuda_fp32.log"
[ -x bin/vgen ] && timeout 120 ./bin/vgen golden --fixtures ../tests/golden --set device=cuda --set precision=bf16 > "$OUT/golden_cuda_bf16.log" 2>&1; tail -3 "$OUT/golden_cuda_bf16.log"
for b in attention_bench cuda_kernels_bench; do f=$(find . -name $b -type f | head -1); [ -n "$f" ] && timeout 120 $f > "$OUT/$b.log" 2>&1; tail -6 "$OUT/$b.log"; done
f=$(find . -name vgen_dit_bench -type f | head -1)
[ -n "$f" ] && timeout 200 $f --layers 4 --shapes 480p,720p --reps 2 > "$OUT/dit_bench.log" 2>&1; tail -8 "$OUT/dit_bench.log"
