#!/usr/bin/env bash
# Device run 37 (lead, one H200): cuDNN SDPA over head groups (G sequential calls of 40/G heads), 75,600
# queries x 75,520 keys with LSE, G = 1 2 4 5 8 10 20, twice in alternating order: does a call with fewer
# heads per wave (more CTAs of one head at a time, K/V shared in L2) run faster per FLOP?
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"
A=$(find $B -name attention_bench -type f | head -1)
for G in 1 2 4 5 8 10 20 20 10 8 5 4 2 1; do timeout 60 $A --cudnn-only --kv 75520 --lse-seq 1 --head-groups $G 75600 >> "$OUT/groups.jsonl" 2>> "$OUT/a.err"; done
python3 -c "
import json
for l in open('$OUT/groups.jsonl'):
    j=json.loads(l); print(j['groups'], j['median_ms'], j['tflops'], j['status'])"
el done
