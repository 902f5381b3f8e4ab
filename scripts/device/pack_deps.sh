#!/usr/bin/env bash
# Copies the build dependencies the GPU machine may lack from this machine into .dev/deps/
# (an ignored path), to be copied to the GPU machine with the working tree (which has no network).
# scripts/device/gpu_check.sh uses each copy only when the system lacks the package.
#   .dev/deps/nlohmann/    include/nlohmann + share/cmake/nlohmann_json (header-only, relocatable config)
#   .dev/deps/googletest/  GoogleTest sources (built there with that machine's compiler)
#   .dev/deps/openblas/    cblas.h & co + libopenblas.so.0 and the Fortran runtime it needs
#                          (VGEN_PACK_BLAS=netlib: the 0.5 MB reference libblas.so.3 instead)
#   .dev/deps/images/      png.h, jpeglib.h, zlib.h & co + libpng16.so.16, libjpeg.so.*, libz.so.1
#                          (~1 MB: image inputs, VGEN_IMAGES, where the GPU machine lacks libpng-dev
#                          and libjpeg-dev; skipped with a note where this machine lacks them)
# Usage: [VGEN_PACK_BLAS=openblas|netlib] scripts/device/pack_deps.sh [DEST]   (default DEST:
# <repo>/.dev/deps). Idempotent; other subdirectories of DEST (cudnn_frontend/, ...) are left alone.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEST=${1:-$ROOT/.dev/deps}
ARCH_LIB=/usr/lib/x86_64-linux-gnu

die() { echo "pack_deps: $*" >&2; exit 1; }

# Only this script's own subdirectories are replaced: others (e.g. cudnn_frontend/) share .dev/deps.
rm -rf "$DEST/nlohmann" "$DEST/googletest" "$DEST/openblas" "$DEST/images"
mkdir -p "$DEST"

# nlohmann-json: headers and the CMake package config (it locates the headers relative to itself).
[ -f /usr/include/nlohmann/json.hpp ] || die "/usr/include/nlohmann is missing here"
mkdir -p "$DEST/nlohmann/include" "$DEST/nlohmann/share/cmake"
cp -r /usr/include/nlohmann "$DEST/nlohmann/include/"
for d in /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json "$ARCH_LIB/cmake/nlohmann_json"; do
  if [ -f "$d/nlohmann_jsonConfig.cmake" ]; then
    cp -r "$d" "$DEST/nlohmann/share/cmake/"
    break
  fi
done
[ -f "$DEST/nlohmann/share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake" ] || die "no nlohmann_jsonConfig.cmake found"

# GoogleTest: sources only; a static library built here could mismatch the other compiler.
[ -f /usr/src/googletest/CMakeLists.txt ] || die "/usr/src/googletest is missing here (apt-get install googletest)"
mkdir -p "$DEST/googletest"
cp -r /usr/src/googletest/. "$DEST/googletest/"
rm -rf "$DEST/googletest/googletest/test" "$DEST/googletest/googlemock/test" "$DEST/googletest/googletest/samples" \
  "$DEST/googletest/googletest/docs" "$DEST/googletest/googlemock/docs"

# BLAS for the CPU references: OpenBLAS (default, ~39 MB with its Fortran runtime) or, with
# VGEN_PACK_BLAS=netlib, the reference BLAS with CBLAS (~0.5 MB, single-threaded, slower). Either
# way the OpenBLAS cblas.h is carried (the project calls only standard cblas_* functions).
BLAS_KIND=${VGEN_PACK_BLAS:-openblas}
blas=$(readlink -f "$ARCH_LIB/libopenblas.so.0" 2>/dev/null || true)
[ -n "$blas" ] && [ -f "$blas" ] || die "libopenblas.so.0 not found in $ARCH_LIB (its cblas.h is needed too)"
hdr=""
for d in "$(dirname "$blas" | sed 's#/lib/#/include/#')" /usr/include/x86_64-linux-gnu/openblas-pthread \
  /usr/include/openblas /usr/include; do
  if [ -f "$d/cblas.h" ] && [ -f "$d/openblas_config.h" ]; then hdr=$d; break; fi
done
[ -n "$hdr" ] || die "no OpenBLAS cblas.h / openblas_config.h found"
mkdir -p "$DEST/openblas/include" "$DEST/openblas/lib"
cp "$hdr"/cblas.h "$hdr"/openblas_config.h "$DEST/openblas/include/"
[ -f "$hdr/f77blas.h" ] && cp "$hdr/f77blas.h" "$DEST/openblas/include/"
case "$BLAS_KIND" in
  openblas) lib=$blas; name=libopenblas.so.0 ;;
  netlib)
    lib=$(readlink -f "$ARCH_LIB/blas/libblas.so.3" 2>/dev/null || true)
    [ -n "$lib" ] && [ -f "$lib" ] || die "reference BLAS $ARCH_LIB/blas/libblas.so.3 not found"
    [ "$(nm -D "$lib" | grep -c " T cblas_sgemm$")" -gt 0 ] || die "$lib has no CBLAS"
    name=libblas.so.3 ;;
  *) die "VGEN_PACK_BLAS must be openblas or netlib, got $BLAS_KIND" ;;
esac
# No unversioned .so links: links may not travel; gpu_check adds them.
cp "$lib" "$DEST/openblas/lib/$name"
ldd "$lib" | awk '$3 ~ /^\// {print $1, $3}' | while read -r dep path; do
  case "$dep" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libgcc_s.so*|ld-linux*) ;;  # part of every system
    *) cp "$(readlink -f "$path")" "$DEST/openblas/lib/$dep" ;;
  esac
done

# Image decoding (libpng, libjpeg-turbo and the zlib libpng needs): headers and the versioned shared
# libraries (symlinks resolved; gpu_check.sh names the files to CMake).
pack_images() {
  local h lib d=$DEST/images
  mkdir -p "$d/include" "$d/lib"
  for h in png.h pngconf.h pnglibconf.h jpeglib.h jmorecfg.h jerror.h zlib.h zconf.h; do
    [ -f "/usr/include/$h" ] || { echo "pack_deps: no /usr/include/$h here: image libraries not packed" >&2; return 1; }
    cp -L "/usr/include/$h" "$d/include/"
  done
  for h in /usr/include/jconfig.h /usr/include/x86_64-linux-gnu/jconfig.h; do
    [ -f "$h" ] && { cp -L "$h" "$d/include/"; break; }
  done
  [ -f "$d/include/jconfig.h" ] || { echo "pack_deps: no jconfig.h here: image libraries not packed" >&2; return 1; }
  for lib in libpng16.so.16 libjpeg.so.62 libjpeg.so.8 libz.so.1; do
    [ -e "$ARCH_LIB/$lib" ] && cp "$(readlink -f "$ARCH_LIB/$lib")" "$d/lib/$lib"
  done
  ls "$d"/lib/libpng16.so.16 "$d"/lib/libjpeg.so.* "$d"/lib/libz.so.1 >/dev/null 2>&1 ||
    { echo "pack_deps: libpng16 / libjpeg / libz not all found in $ARCH_LIB: image libraries not packed" >&2; return 1; }
}
pack_images || rm -rf "$DEST/images"

echo "pack_deps: wrote $DEST"
du -sh "$DEST/nlohmann" "$DEST/googletest" "$DEST/openblas" "$DEST"/images 2>/dev/null
