#!/usr/bin/env bash
# Device run 25 (lead, two H200s): with the fused GELU epilogue (3140037) - vgen golden bf16 on two
# GPUs for cfg 2, ulysses 2, ring 2, attn2d 1x2, ulysses 2 + parallel VAE 2; the DiT at 720p on one
# GPU and per 2-GPU mode (the speedups of issue 7), 40 layers, median of 3.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
M="mpirun -np 2 --bind-to none"
for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do
  timeout 40 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"; grep FAIL "$OUT/g.log" | head -3
done
D=$(find $B -name vgen_dit_bench -type f | head -1)
timeout 90 $D --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_single.log" 2>&1; el "single"; grep "^#.*tokens" "$OUT/dit_single.log"
for m in ring attn2d ulysses cfg; do
  timeout 80 $M $D --mode $m --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_$m.log" 2>&1; el "$m"; grep "^#.*tokens\|error" "$OUT/dit_$m.log" | head -3
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
