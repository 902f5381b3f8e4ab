#!/usr/bin/env bash
# CPU demo: installs dependencies, builds, then renders recipes/prompts/demo.txt with the tiny Wan
# 2.1 test model on 4 ranks (CFG 2 × Ulysses 2):
#   mpirun -np 4 --oversubscribe build/bin/vgen --recipe recipes/demo-cpu.yaml
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
bash scripts/build.sh
BUILD="${VGEN_BUILD_DIR:-$ROOT/build}"

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
mpirun -np 4 --oversubscribe --bind-to none "$BUILD/bin/vgen" --recipe recipes/demo-cpu.yaml "$@"

OUT="$ROOT/outputs/demo"
echo
echo "demo: videos in $OUT:"
ls -1 "$OUT"/*.mp4 2>/dev/null || echo "  (no MP4 files)"
echo "demo: timings in $OUT/timing.json"
