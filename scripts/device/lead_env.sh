# Shared setup of the lead's device-run scripts (sourced): repository root, $OUT, NVLink multicast
# off, root-run MPI, the carried OpenBLAS, and the configured build dir in $B.
cd "$(dirname "${BASH_SOURCE[1]}")/../.."
ROOT=$PWD
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$ROOT/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VGEN_COMMIT=${VGEN_COMMIT:-unknown}
B=build-gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
bash scripts/device/gpu_check.sh --configure-only > "$OUT/configure.log" 2>&1 || tail -20 "$OUT/configure.log"
