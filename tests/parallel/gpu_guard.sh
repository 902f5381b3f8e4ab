#!/usr/bin/env bash
# gpu_guard.sh NP CMD...: runs CMD when at least NP CUDA devices are visible; otherwise prints a
# gtest-style skip line, which tests/skip_status.sh turns into ctest's skip code (not passed).
np=$1
shift
if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
  n=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
else
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
if [ "$n" -lt "$np" ]; then
  echo "[  SKIPPED ] needs $np CUDA devices, $n visible"
  exit 0
fi
exec "$@"
