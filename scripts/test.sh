#!/usr/bin/env bash
# Installs dependencies, builds (with CUDA: for 90a, and the kernels alone for the other checked
# architectures), and runs every test layer that needs no GPU and is not a benchmark:
#   ctest -LE 'gpu|bench'  (unit, golden, parallel, e2e). Exits non-zero when a test fails.
# The include layers (scripts/check_layers.py) are checked first: a second, before any compiling.
# VGEN_TEST_JOBS (default 2) sets ctest's parallelism, VGEN_TEST_TIMEOUT (default 900 s) the
# per-test limit; extra arguments go to ctest (e.g. -L unit, -R recipe).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
python3 scripts/check_layers.py
# One full build for Hopper (VGEN_TEST_CUDA_ARCHS), then the kernels' device code alone for the other
# architectures of VGEN_CUDA_CHECK_ARCHS (80, 89, 100a, 120): every kernel compiles, or is compiled
# out, on each of them (docs/support.md). Both only where nvcc is installed.
bash scripts/build.sh -DVGEN_CUDA_ARCHS="${VGEN_TEST_CUDA_ARCHS:-90a}"
BUILD="${VGEN_BUILD_DIR:-$ROOT/build}"
if cmake --build "$BUILD" --target help | grep vgen_cuda_archs_check >/dev/null; then  # not -q: no SIGPIPE under pipefail
  start=$(date +%s)
  cmake --build "$BUILD" --target vgen_cuda_archs_check -j"$(nproc)"
  echo "vgen_cuda_archs_check: $(( $(date +%s) - start )) s"
fi
cd "$BUILD"
ctest --output-on-failure -LE 'gpu|bench' --timeout "${VGEN_TEST_TIMEOUT:-900}" -j"${VGEN_TEST_JOBS:-2}" "$@"
