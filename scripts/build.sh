#!/usr/bin/env bash
# Configures and builds vgen into build/ (or $VGEN_BUILD_DIR). Extra arguments go to cmake, e.g.
#   scripts/build.sh -DVGEN_CUDA=OFF
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${VGEN_BUILD_DIR:-$ROOT/build}"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" "$@"
cmake --build "$BUILD" -j"$(nproc)"
echo "build: $BUILD/bin/vgen"
