#!/usr/bin/env bash
# Device run 26 (lead, the two-H200 machine of run 25, GPU 0): vgen DiT 720p then the diffusers peer,
# same call - the ratio on a second machine (run 25's single-GPU time was 2.7% slower than run 24's).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
export CUDA_VISIBLE_DEVICES=0
D=$(find $B -name vgen_dit_bench -type f | head -1)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/diffusers-*.whl > /dev/null 2>&1
timeout 90 $D --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --tag run26 --out "$OUT/vgen_dit.jsonl" 2>&1 | grep "^#.*tokens"; el vgen
PYTHONPATH=/tmp/site timeout 120 python3 scripts/bench/peer/diffusers_wan_bench.py dit720 > "$OUT/peer.jsonl" 2> "$OUT/peer.err"; el "peer rc=$?"; cut -c1-260 "$OUT/peer.jsonl"
