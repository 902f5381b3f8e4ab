#!/usr/bin/env bash
# Device run 2 (lead): build, gpu tests, golden on the GPU (fp32 + bf16, whole pipeline), DiT and
# VAE benchmarks at Wan2.1-14B shapes with the diffusers peer in the same call. Logs to $OUT.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head
(cd $B && timeout 200 ctest -L gpu --timeout 120 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests"; grep -E "tests passed|\(Failed\)" "$OUT/gpu_tests.log"
for p in fp32 bf16; do timeout 150 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden $p: $(tail -1 "$OUT/golden_$p.log")"; grep FAIL "$OUT/golden_$p.log" | head -5; done
D=$(find $B -name vgen_dit_bench -type f | head -1); V=$(find $B -name vgen_vae_bench -type f | head -1)
timeout 150 $D --shapes 480p,720p --layers 40 --reps 2 --warmup 1 --no-profile --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_bench.log" 2>&1; el "vgen dit"; grep "^#" "$OUT/dit_bench.log"
timeout 100 $V --shapes 480p,720p --dtype bf16 --reps 2 --out "$OUT/vgen_vae.jsonl" > "$OUT/vae_bench.log" 2>&1; el "vgen vae"; tail -3 "$OUT/vae_bench.log" | cut -c1-400
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/diffusers-*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 scripts/bench/peer/diffusers_wan_bench.py dit480 dit720 vae720 vae480 > "$OUT/peer.jsonl" 2> "$OUT/peer.err"; el "peer rc=$?"; cut -c1-300 "$OUT/peer.jsonl"; tail -3 "$OUT/peer.err"
