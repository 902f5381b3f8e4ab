#!/usr/bin/env bash
# Device run 24 (lead, two H200s, one used): the GELU of the FFN in cuBLASLt's GELU+bias epilogue by
# default. All gpu tests; vgen golden on one GPU (fp32, bf16); then the DiT forward against the
# diffusers peer on GPU 0, interleaved (vgen, peer, vgen, peer) so neither always runs on the hotter GPU.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 170 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected" "$OUT/gpu_tests.log" | head -12
for p in fp32 bf16; do timeout 40 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep FAIL "$OUT/golden_$p.log" | head -3; done
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/diffusers-*.whl > /dev/null 2>&1
D=$(find $B -name vgen_dit_bench -type f | head -1)
export CUDA_VISIBLE_DEVICES=0
vg() { timeout 110 $D --shapes $1 --layers 40 --reps 3 --warmup 1 --no-profile --tag "$2" --out "$OUT/vgen_dit.jsonl" > "$OUT/v.log" 2>&1; el "vgen $1 $2 rc=$?"; grep "^#.*tokens" "$OUT/v.log"; }
pe() { PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/peer/diffusers_wan_bench.py "$@" >> "$OUT/peer.jsonl" 2> "$OUT/peer.err"; el "peer $* rc=$?"; tail -n $# "$OUT/peer.jsonl" | cut -c1-150; }
vg 480p,720p round1; pe dit480 dit720; vg 720p,480p round2; pe dit720 dit480
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
