#!/usr/bin/env bash
# Device run 17 (lead, one H200): cuDNN SDPA at 720p (75,600 queries, 75,520 keys, 40 heads) as
# G back-to-back calls over H/G heads each: does streaming the keys of fewer heads at a time run
# faster per FLOP under the power cap?
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
AB=$(find $B -name attention_bench -type f | head -1)
for g in 1 2 4 5 8 10 20 40 1 4 10 2; do timeout 60 $AB --kv 75520 --head-groups $g 75600 2>&1 | grep head_groups; done
el "done"
