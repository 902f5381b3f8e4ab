#!/usr/bin/env bash
# (The head-group code this run measured was not kept: no gain at the model level, see results/README.md.)
# Device run 38 (lead, one H200): cuDNN attention in head groups (attention_head_groups: 720p 10 calls
# of 4 heads, 480p 2 of 20). Attention gpu tests (head groups against the reference), vgen golden on
# one GPU, A/B at 720p (10 layers) and 480p (40 layers) with VGEN_ATTN_HEAD_GROUPS=1 (one call) against
# auto, ABBA; then two rounds of vgen against the diffusers peer (40 layers), 480p/720p then 720p/480p.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 150 ctest -L gpu -R "attention" --output-on-failure --timeout 140 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected" "$OUT/gpu_tests.log" | head -12
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { VGEN_ATTN_HEAD_GROUPS=$2 timeout 80 $D --shapes $1 --layers $3 --reps 3 --warmup 1 --no-profile --tag "hg_$2" --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; echo "$1 L$3 groups=$2 $(grep -o '"seconds":[0-9.]*' "$OUT/dit.jsonl" | tail -1)"; }
r 720p auto 10; r 720p 1 10; r 720p 1 10; r 720p auto 10
r 480p auto 40; r 480p 1 40; r 480p 1 40; r 480p auto 40
el "A/B done"
source scripts/device/lead_peer_round.sh
vg 480p,720p round1; pe dit480 dit720
vg 720p,480p round2; pe dit720 dit480
el done
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
