#!/usr/bin/env bash
# Device run 14 (lead, one H200): the memory-bound DiT ops and the block GEMMs at 720p, with the
# GEMMs also split into column blocks of the weight (does an L2-sized weight block run faster?).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target cuda_kernels_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
$(find $B -name cuda_kernels_bench -type f | head -1) --dit-ops; el "dit ops"
