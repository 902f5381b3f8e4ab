#!/usr/bin/env bash
# (The experiment switches this run used were removed again: see results/README.md, runs 39-42.)
# Device run 41 (lead, one H200): the remainder key range as the native kernel's carry-in (no cuDNN
# call and merge pass for the last 80 keys at 720p). gpu tests of attention and the DiT, vgen golden
# fp32/bf16; attention_bench --split with 128-query blocks (default) and 64 (VGEN_EXP_TAIL_BM);
# 720p 10 layers ABBA against the old path (VGEN_ATTN_TAIL=cudnn); one round against the peer.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 150 ctest -L gpu -R "attention|dit" --output-on-failure --timeout 140 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected" "$OUT/gpu_tests.log" | head -12
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
A=$(find $B -name attention_bench -type f | head -1)
timeout 60 $A --split 75600 32760 > "$OUT/split128.jsonl" 2>&1; el "split bm128"
VGEN_EXP_TAIL_BM=64 timeout 60 $A --split 75600 32760 > "$OUT/split64.jsonl" 2>&1; el "split bm64"
for f in split128 split64; do echo "$f: $(grep -o '"part":"[a-z_]*","S":[0-9]*\|"median_ms":[0-9.]*' "$OUT/$f.jsonl" | paste -d' ' - - | sed 's/"part"://;s/"S"://;s/"median_ms"://' | tr '\n' ';')"; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_ATTN_TAIL=$1 timeout 60 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag "tail_$1" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "tail $1: $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r carry; r cudnn; r cudnn; r carry
el "A/B done"
source scripts/device/lead_peer_round.sh
vg 480p,720p round1; pe dit480 dit720
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
