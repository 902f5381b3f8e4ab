#!/usr/bin/env bash
# CPU demo: installs dependencies, builds only the vgen binary (the CUDA backend only where a GPU is
# present, or with VGEN_DEMO_CUDA=ON), then renders recipes/prompts/demo.txt with the tiny Wan 2.1
# test model on 4 ranks (CFG 2 × Ulysses 2):
#   mpirun -np 4 --oversubscribe build-demo/bin/vgen --recipe recipes/demo-cpu.yaml
# Its own build folder (VGEN_DEMO_BUILD_DIR, default build-demo) keeps scripts/test.sh's build/
# (every test, the CUDA backend) apart. Extra arguments go to vgen.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh

CUDA="${VGEN_DEMO_CUDA:-}"
if [ -z "$CUDA" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then CUDA=AUTO; else CUDA=OFF; fi
fi
# Where a GPU is found: its architecture only (docs/support.md), one device compile instead of six.
ARCHS=()
if [ "$CUDA" = AUTO ] && [ -z "${VGEN_DEMO_CUDA:-}" ]; then ARCHS=(-DVGEN_CUDA_ARCHS="${VGEN_CUDA_ARCHS:-native}"); fi
BUILD="${VGEN_DEMO_BUILD_DIR:-$ROOT/build-demo}"
echo "demo: building the vgen binary only (CUDA backend: $CUDA) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DVGEN_CUDA="$CUDA" -DVGEN_BUILD_TESTS=OFF "${ARCHS[@]}" >/dev/null
cmake --build "$BUILD" --target vgen -j"$(nproc)"

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
echo "demo: rendering 4 prompts on 4 CPU ranks (progress per step below)"
mpirun -np 4 --oversubscribe --bind-to none "$BUILD/bin/vgen" --recipe recipes/demo-cpu.yaml "$@"

OUT="$ROOT/outputs/demo"
echo
echo "demo: videos in $OUT:"
ls -1 "$OUT"/*.mp4 2>/dev/null || echo "  (no MP4 files)"
echo "demo: timings in $OUT/timing.json"
echo "demo: the test model's weights are random, so its frames are coloured noise by design; a real"
echo "      checkpoint renders real video (README \"Running on GPUs\")"
