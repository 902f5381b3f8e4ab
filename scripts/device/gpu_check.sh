#!/usr/bin/env bash
# GPU check, run on the GPU machine from the repository root: configures vgen with the CUDA backend
# and without FFmpeg, builds with all cores, runs `ctest -L gpu --output-on-failure` and copies the
# logs to $OUT/gpu_check (or <build>/gpu_check_logs when OUT is unset). Exit status: ctest's
# (2 when a dependency is missing, 3 when configure or build fails).
# scripts/bench/gpu_suite.sh configures through it (--configure-only); `gpu_suite.sh tests` is the
# usual way to run the gpu tests, with a JSON record of the result.
#
# Dependencies come from the system when present, otherwise from the copies that
# scripts/device/pack_deps.sh put in .dev/deps (copied to the GPU machine with the working tree):
# nlohmann-json (header-only), GoogleTest (built here from the carried sources), OpenBLAS, and the
# image libraries (libpng, libjpeg, zlib: without them, and without a carried copy, VGEN_IMAGES=OFF).
#
# Usage: scripts/device/gpu_check.sh [--tests-only] [--configure-only] [--bench] [--build DIR]
#   --tests-only      build only the gpu test targets (faster than the whole tree)
#   --bench           afterwards run cuda_kernels_bench (attention / GEMM timings at Wan shapes)
#   --configure-only  stop after configuring (checks the dependency setup)
# Environment: VGEN_GPU_BUILD (build dir, default build-gpu), JOBS (default nproc), VGEN_CUDA_ARCHS
# (default 90a: the H100/H200 machines; docs/support.md),
# VGEN_DEPS_FORCE=1 (use the carried copies even where the system has the package; for testing).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
TESTS_ONLY=0
CONFIGURE_ONLY=0
BENCH=0
FORCE=${VGEN_DEPS_FORCE:-0}
while [ $# -gt 0 ]; do
  case "$1" in
    --tests-only) TESTS_ONLY=1 ;;
    --configure-only) CONFIGURE_ONLY=1 ;;
    --bench) BENCH=1 ;;
    --build) BUILD=$2; shift ;;
    *) echo "gpu_check: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
DEPS=$ROOT/.dev/deps
LOG=${OUT:+$OUT/gpu_check}
LOG=${LOG:-$BUILD/gpu_check_logs}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$BUILD" "$LOG"
# NVLink multicast stays off (device README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

say() { echo "[gpu_check] $*" | tee -a "$LOG/summary.txt"; }
: > "$LOG/summary.txt"
T0=$(date +%s)

{
  date -u
  nvidia-smi || true
  nvidia-smi -L || true
  nvcc --version
  cmake --version
  mpirun --version
  gcc --version
  echo "nproc: $(nproc)"
} > "$LOG/env.txt" 2>&1
say "GPUs: $(nvidia-smi -L 2>/dev/null | wc -l) ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"

PREFIX=()

# nlohmann-json (header-only)
if [ "$FORCE" != 1 ] && [ -f /usr/include/nlohmann/json.hpp ]; then
  say "nlohmann-json: system"
elif [ -f "$DEPS/nlohmann/include/nlohmann/json.hpp" ]; then
  PREFIX+=("$DEPS/nlohmann")
  say "nlohmann-json: carried copy in .dev/deps/nlohmann"
else
  say "nlohmann-json missing: run scripts/device/pack_deps.sh on the dev machine and copy .dev/deps to the GPU machine"
  exit 2
fi

# GoogleTest: an installed package, else build the system or carried sources here.
gtest_installed() {
  local d
  [ "$FORCE" = 1 ] && return 1
  for d in /usr/lib/x86_64-linux-gnu/cmake/GTest /usr/lib/cmake/GTest /usr/local/lib/cmake/GTest \
    /usr/local/lib64/cmake/GTest; do
    [ -f "$d/GTestConfig.cmake" ] && return 0
  done
  [ -f /usr/include/gtest/gtest.h ] && ls /usr/lib/x86_64-linux-gnu/libgtest.* /usr/lib/libgtest.* >/dev/null 2>&1
}
if gtest_installed; then
  say "GoogleTest: system"
else
  GT_SRC=""
  if [ "$FORCE" != 1 ] && [ -f /usr/src/googletest/CMakeLists.txt ]; then GT_SRC=/usr/src/googletest
  elif [ -f "$DEPS/googletest/CMakeLists.txt" ]; then GT_SRC=$DEPS/googletest; fi
  if [ -z "$GT_SRC" ]; then
    say "GoogleTest missing: run scripts/device/pack_deps.sh on the dev machine and copy .dev/deps to the GPU machine"
    exit 2
  fi
  GT_PREFIX=$BUILD/_deps/gtest
  if [ ! -f "$GT_PREFIX/lib/cmake/GTest/GTestConfig.cmake" ]; then
    say "GoogleTest: building $GT_SRC"
    if ! { cmake -S "$GT_SRC" -B "$BUILD/_deps/gtest-build" -DCMAKE_BUILD_TYPE=Release \
           -DCMAKE_INSTALL_PREFIX="$GT_PREFIX" -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
           -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
         cmake --build "$BUILD/_deps/gtest-build" -j "$JOBS" &&
         cmake --install "$BUILD/_deps/gtest-build"; } > "$LOG/gtest_build.txt" 2>&1; then
      say "GoogleTest build failed (see gtest_build.txt)"
      exit 3
    fi
  fi
  PREFIX+=("$GT_PREFIX")
  say "GoogleTest: built from $GT_SRC"
fi

# OpenBLAS (CPU references of the tests): system, else the carried library.
EXTRA=()
if [ "$FORCE" != 1 ] && [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] &&
  { [ -f /usr/include/cblas.h ] || ls /usr/include/*/cblas.h /usr/include/*/*/cblas.h >/dev/null 2>&1; }; then
  say "OpenBLAS: system"
elif [ -f "$DEPS/openblas/lib/libopenblas.so.0" ] || [ -f "$DEPS/openblas/lib/libblas.so.3" ]; then
  # A prefix in the build dir: the carried headers and libraries plus the unversioned .so link
  # find_library needs (links are not carried).
  OB=$BUILD/_deps/openblas
  rm -rf "$OB"
  mkdir -p "$OB/lib"
  cp -r "$DEPS/openblas/include" "$OB/include"
  for f in "$DEPS"/openblas/lib/*; do ln -sf "$f" "$OB/lib/$(basename "$f")"; done
  if [ -f "$DEPS/openblas/lib/libopenblas.so.0" ]; then
    ln -sf "$DEPS/openblas/lib/libopenblas.so.0" "$OB/lib/libopenblas.so"
    EXTRA+=(-DBLA_VENDOR=OpenBLAS)
    say "BLAS: carried OpenBLAS in .dev/deps/openblas"
  else
    ln -sf "$DEPS/openblas/lib/libblas.so.3" "$OB/lib/libblas.so"
    EXTRA+=(-DBLA_VENDOR=Generic)
    say "BLAS: carried reference BLAS in .dev/deps/openblas"
  fi
  PREFIX+=("$OB")
  export LD_LIBRARY_PATH=$DEPS/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  say "OpenBLAS missing: run scripts/device/pack_deps.sh on the dev machine and copy .dev/deps to the GPU machine"
  exit 2
fi

# Image inputs need the libpng and libjpeg headers: the system's, else the copies pack_deps.sh put
# in .dev/deps/images (named to CMake file by file; found at run time through LD_LIBRARY_PATH, which
# gpu_suite.sh sets too); without either the build reads no images (VGEN_IMAGES=OFF: its image tests
# are not registered, docs/images.md).
IM=$DEPS/images
IM_JPEG=$(ls "$IM"/lib/libjpeg.so.* 2>/dev/null | head -1)
if [ "$FORCE" != 1 ] && [ -f /usr/include/png.h ] &&
  { [ -f /usr/include/jpeglib.h ] || [ -f /usr/include/x86_64-linux-gnu/jpeglib.h ]; }; then
  say "libpng/libjpeg: system"
elif [ -f "$IM/include/png.h" ] && [ -f "$IM/include/jpeglib.h" ] && [ -f "$IM/lib/libpng16.so.16" ] && [ -n "$IM_JPEG" ]; then
  EXTRA+=(-DPNG_PNG_INCLUDE_DIR="$IM/include" -DPNG_LIBRARY_RELEASE="$IM/lib/libpng16.so.16"
          -DJPEG_INCLUDE_DIR="$IM/include" -DJPEG_LIBRARY_RELEASE="$IM_JPEG")
  if [ "$FORCE" = 1 ] || [ ! -f /usr/include/zlib.h ]; then
    EXTRA+=(-DZLIB_INCLUDE_DIR="$IM/include" -DZLIB_LIBRARY_RELEASE="$IM/lib/libz.so.1")
  fi
  export LD_LIBRARY_PATH=$IM/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "libpng/libjpeg: carried in .dev/deps/images"
else
  EXTRA+=(-DVGEN_IMAGES=OFF)
  say "libpng/libjpeg headers missing (and no .dev/deps/images): VGEN_IMAGES=OFF"
fi
# ICU (the byte-level BPE tokenizer of Cosmos 3 prompts; its ~30 MB of data is too large to carry):
# without libicu-dev the build leaves that tokenizer out (VGEN_ICU=OFF) and its CPU tests with it.
if [ ! -f /usr/include/unicode/uchar.h ]; then
  EXTRA+=(-DVGEN_ICU=OFF)
  say "ICU headers missing: VGEN_ICU=OFF"
fi

GEN=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD/Makefile" ] && GEN=(-G Ninja)
PREFIX_ARG=$(IFS=';'; echo "${PREFIX[*]:-}")
say "configure: $BUILD"
if ! cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DVGEN_CUDA=ON -DVGEN_FFMPEG=OFF \
     -DVGEN_CUDA_ARCHS="${VGEN_CUDA_ARCHS:-90a}" -DCMAKE_PREFIX_PATH="$PREFIX_ARG" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "${EXTRA[@]}" > "$LOG/configure.txt" 2>&1; then
  tail -30 "$LOG/configure.txt"
  say "configure failed (see configure.txt)"
  exit 3
fi

grep -E "^-- (vgen|Found (BLAS|GTest|nlohmann_json))" "$LOG/configure.txt" | tee -a "$LOG/summary.txt"
if [ "$CONFIGURE_ONLY" = 1 ]; then
  say "configured (--configure-only)"
  exit 0
fi

TARGETS=()
if [ "$TESTS_ONLY" = 1 ]; then
  TARGETS=(--target nccl_comm_test)
  for f in "$ROOT"/tests/unit/test_*_gpu.cpp; do
    [ -f "$f" ] && TARGETS+=("$(basename "$f" .cpp)")
  done
  [ "$BENCH" = 1 ] && TARGETS+=(cuda_kernels_bench)
fi
say "build: ${TARGETS[*]:-all} with $JOBS jobs"
T1=$(date +%s)
if ! cmake --build "$BUILD" -j "$JOBS" "${TARGETS[@]}" > "$LOG/build.txt" 2>&1; then
  grep -E "error|Error" "$LOG/build.txt" | head -40
  say "build failed after $(( $(date +%s) - T1 )) s (see build.txt)"
  exit 3
fi
say "build took $(( $(date +%s) - T1 )) s; warnings: $(grep -c 'warning' "$LOG/build.txt")"

ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 900 2>&1 | tee "$LOG/ctest.txt"
RC=${PIPESTATUS[0]}
cp "$BUILD/Testing/Temporary/LastTest.log" "$LOG/" 2>/dev/null || true
say "ctest exit $RC"
if [ "$BENCH" = 1 ]; then
  "$BUILD/tests/cuda_kernels_bench" 2>&1 | tee "$LOG/bench.txt"
  say "bench exit ${PIPESTATUS[0]}"
fi
say "total $(( $(date +%s) - T0 )) s"
exit "$RC"
