#!/usr/bin/env bash
# Device run 36 (lead, one H200): does cuDNN's SDPA lose a partial last wave? 75,520 keys with LSE
# (the key split's main range), queries 75,520 / 75,600 / 76,032 (590 / 591 / 594 tiles of 128 over
# 40 heads: 178.8 / 179.1 / 180.0 waves of 132 SMs), interleaved; and 20 heads against 40.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
A=$(find $B -name attention_bench -type f | head -1)
timeout 200 $A --cudnn-only --kv 75520 --lse-seq 1 75520 75600 76032 75600 75520 76032 75520 75600 76032 > "$OUT/waves.jsonl" 2> "$OUT/a.err"; el "waves rc=$?"
timeout 100 $A --cudnn-only --kv 75520 --lse-seq 1 --heads 20 75600 > "$OUT/heads20.jsonl" 2>> "$OUT/a.err"; el "heads20 rc=$?"
grep -h '"median_ms"' "$OUT/waves.jsonl" "$OUT/heads20.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    j=json.loads(l); print(j['S'], j['H'], j.get('lse'), j['median_ms'], j['tflops'])"
el done
