#!/usr/bin/env bash
# Device run 16 (lead, two H200s): the issue-7 benchmark in one call after the register-row norms
# and the residual adds fused into the norms - DiT forward 480p/720p on one GPU, per 2-GPU mode at
# 720p, VAE decode 480p/720p, the diffusers peer on the same GPU - then the DiT kernel/forward gpu
# tests and vgen golden on one GPU (fp32, bf16) and two GPUs (bf16, five meshes).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
D=$(find $B -name vgen_dit_bench -type f | head -1); V=$(find $B -name vgen_vae_bench -type f | head -1)
timeout 120 $D --shapes 480p,720p --layers 40 --reps 2 --warmup 1 --no-profile --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_single.log" 2>&1; el "vgen dit"; grep "^#" "$OUT/dit_single.log"
M="mpirun -np 2 --bind-to none"
for m in ring attn2d ulysses cfg; do
  timeout 75 $M $D --mode $m --shapes 720p --layers 40 --reps 2 --warmup 1 --no-profile --out "$OUT/vgen_dit_$m.jsonl" > "$OUT/dit_$m.log" 2>&1; el "$m"; grep "^#.*720p\|error" "$OUT/dit_$m.log" | head -3
done
timeout 100 $V --shapes 480p,720p --dtype bf16 --reps 2 --out "$OUT/vgen_vae.jsonl" > "$OUT/vae_bench.log" 2>&1; el "vgen vae"; grep "^#" "$OUT/vae_bench.log" | head -4
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/diffusers-*.whl > /dev/null 2>&1
left=$(( 490 - ($(date +%s) - t0) ))
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout $left python3 scripts/bench/peer/diffusers_wan_bench.py dit480 dit720 vae720 vae480 > "$OUT/peer.jsonl" 2> "$OUT/peer.err"; el "peer rc=$?"; cut -c1-200 "$OUT/peer.jsonl"; tail -2 "$OUT/peer.err"
cat "$OUT"/vgen_*.jsonl > "$OUT/vgen_all.jsonl"; (cd "$OUT" && rm -f vgen_dit*.jsonl vgen_vae.jsonl)
(cd $B && timeout 40 ctest -R "dit_kernels_gpu|dit_forward_gpu" --timeout 30 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
for p in fp32 bf16; do timeout 20 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do
  timeout 20 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
