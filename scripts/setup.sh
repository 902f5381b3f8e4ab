#!/usr/bin/env bash
# Installs what vgen needs to build and test (Debian/Ubuntu packages). Idempotent: packages that
# are already installed are left alone, so a second run does nothing. Uses sudo only when not root.
# With a CUDA toolkit present it also tries to fetch the header-only cudnn-frontend through pip;
# that step is optional and never fails the script. numpy (the scripts' self-tests, e.g.
# fp8_accuracy.py --selftest) comes through pip for the python3 on PATH when it lacks it.
set -euo pipefail

PKGS=(libopenmpi-dev openmpi-bin libyaml-cpp-dev libcli11-dev libfmt-dev
      libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libsentencepiece-dev
      libopenblas-dev libgtest-dev nlohmann-json3-dev ffmpeg pkg-config cmake g++
      libpng-dev libjpeg-dev libicu-dev)

missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PKGS[@]} packages present"
fi

# numpy for the python3 that CMake and the tests find first on PATH (Debian's python3-numpy serves
# only /usr/bin/python3).
if command -v python3 >/dev/null && ! python3 -c 'import numpy' >/dev/null 2>&1; then
  if python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: installing numpy for $(command -v python3) with pip"
    python3 -m pip install -q numpy ||
      echo "setup: warning: pip could not install numpy (bench_fp8_accuracy_selftest needs it)" >&2
  else
    echo "setup: warning: $(command -v python3) has no numpy and no pip (bench_fp8_accuracy_selftest needs numpy)" >&2
  fi
fi

# Optional: cudnn-frontend headers (CUDA builds only).
nvcc_bin="$(command -v nvcc || true)"
[ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc_bin=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc_bin" ]; then
  find_frontend() {
    local d
    for d in /usr/include /usr/local/include /usr/local/cuda/include \
             $(python3 -c 'import site; print(" ".join(p + "/include" for p in site.getsitepackages()))' 2>/dev/null); do
      if [ -f "$d/cudnn_frontend.h" ]; then echo "$d"; return 0; fi
    done
    return 1
  }
  if dir="$(find_frontend)"; then
    echo "setup: cudnn-frontend headers in $dir"
  elif command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: CUDA found; installing cudnn-frontend headers with pip (optional)"
    if python3 -m pip install -q nvidia-cudnn-frontend >/dev/null 2>&1 && dir="$(find_frontend)"; then
      echo "setup: cudnn-frontend headers in $dir"
    else
      echo "setup: warning: could not install cudnn-frontend headers; the cuDNN attention path may be unavailable" >&2
    fi
  else
    echo "setup: warning: CUDA found but no pip for the optional cudnn-frontend headers" >&2
  fi
fi
