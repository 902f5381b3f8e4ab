#!/usr/bin/env bash
# Device run 56 (session 10, one H200): first run of the Hopper attention kernel (attention_wgmma.cu):
# its gpu test against the CPU reference, then attention_bench against cuDNN at 480p/720p shapes.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 --target attention_bench test_attention_gpu > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error|C75" "$OUT/build.log" | head -5
T=$(find $B -name test_attention_gpu -type f | head -1); A=$(find $B -name attention_bench -type f | head -1)
timeout 120 $T --gtest_filter='*Wgmma*' > "$OUT/t.log" 2>&1; el "wgmma test rc=$?"; grep -E "OK|FAILED|Failure|expected|SKIP" "$OUT/t.log" | head -30
timeout 200 $A --cudnn-only --wgmma --lse-seq 11 32760 75600 > "$OUT/bench.jsonl" 2> "$OUT/a.err"; el "bench rc=$?"; tail -3 "$OUT/a.err"
grep -h '"median_ms"\|check_wgmma' "$OUT/bench.jsonl" | cut -c1-300
el done
