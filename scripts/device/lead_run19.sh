#!/usr/bin/env bash
# Device run 19 (lead, two H200s, warm after run 18): the DWDP parity test with its corrected
# weight-bytes check (5 blocks over 2 ranks: owned + 2 slots can equal the whole model).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target dwdp_test > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
timeout 40 mpirun -np 2 --bind-to none $(find $B -name dwdp_test -type f | head -1) 2>&1 | grep -v "^$" | tail -6; el "dwdp_test"
