#!/usr/bin/env bash
# Device run 5 (lead, two H200s): build; every gpu test (device Ring/Attention2D on 2 ranks); golden
# bf16 on 2 GPUs for cfg 2 / ulysses 2 / ring 2 / attn2d 1x2 / ulysses 2 + parallel VAE 2; DiT 720p
# on one GPU (profile + GEMM epilogue stats) and per 2-GPU mode in the same call.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu --output-on-failure --timeout 120 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests"
grep -E "tests passed|\(Failed\)|Failure|Skipped" "$OUT/gpu_tests.log" | head -12
M="mpirun -np 2 --bind-to none"
for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do
  timeout 100 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"; grep "FAIL" "$OUT/g.log" | head -3
done
D=$(find $B -name vgen_dit_bench -type f | head -1)
timeout 80 $D --shapes 720p --layers 40 --reps 2 --warmup 1 > "$OUT/dit_single.log" 2>&1; el "single"; grep "^#.*720p" "$OUT/dit_single.log"
grep -o '"gemm_calls":[0-9]*,"gemm_unfused":[0-9]*' "$OUT/dit_single.log"
for m in ring attn2d ulysses cfg; do
  timeout 75 $M $D --mode $m --shapes 720p --layers 40 --reps 2 --warmup 1 --no-profile > "$OUT/dit_$m.log" 2>&1; el "$m"; grep "^#.*720p\|error" "$OUT/dit_$m.log" | head -3
done
cat "$OUT"/dit_*.log | grep '^{' > "$OUT/dit_2gpu.jsonl"
