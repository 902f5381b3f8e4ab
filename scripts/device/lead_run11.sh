#!/usr/bin/env bash
# Device run 11 (lead, two H200s): build; every gpu test and vgen golden (1 GPU fp32/bf16, 2 GPUs
# bf16 on the five meshes) for the commits after run 8; cuDNN SDPA rate against the query count at
# 75,520 keys (does a shorter query range run faster per FLOP?); DiT 720p (10 layers) with key
# chunks of several sizes and with the fused GELU epilogue.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 300 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests"
grep -E "tests passed|\(Failed\)|\(Skipped\)|Failure|Timeout" "$OUT/gpu_tests.log" | head -20
AB=$(find $B -name attention_bench -type f | head -1)
ab() { timeout 60 $AB --cudnn-only "$@" 2>&1 | grep -o '"S":[0-9]*,"Skv":[0-9]*,"H":[0-9]*.*"median_ms":[0-9.]*,"tflops":[0-9.]*'; }
for sq in 75600 37800 18944 16384 8192 4096; do ab --kv 75520 $sq; done
ab --kv 4736 16384; ab --kv 16384 16384
el "attention bench"
D=$(find $B -name vgen_dit_bench -type f | head -1)
for c in auto 37760 18944 9472 4736; do
  VGEN_ATTN_KV_CHUNK=$c timeout 90 $D --shapes 720p --layers 10 --reps 2 --warmup 1 > "$OUT/dit_chunk$c.log" 2>&1; el "dit chunk $c rc=$?"; grep "^#.*720p" "$OUT/dit_chunk$c.log"
done
timeout 90 $D --shapes 720p --layers 10 --reps 2 --warmup 1 --fused-gelu > "$OUT/dit_gelu.log" 2>&1; el "dit fused gelu rc=$?"; grep "^#.*720p" "$OUT/dit_gelu.log"
for p in fp32 bf16; do timeout 150 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep -E "FAIL" "$OUT/golden_$p.log" | head -5; done
M="mpirun -np 2 --bind-to none"
for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2" "parallel_config.ulysses_size=2 --set parallel_config.async_ulysses=true"; do
  timeout 100 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"; grep "FAIL" "$OUT/g.log" | head -3
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
