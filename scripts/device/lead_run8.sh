#!/usr/bin/env bash
# Device run 8 (lead, two H200s): build; every gpu test (UMT5 kernels and the device text encoder,
# cuDNN attention incl. key chunks, 2-rank NCCL/Ring/Attention2D); vgen golden on one GPU in fp32
# and bf16 (text_encode now on the device) and in bf16 on two GPUs for the five meshes of issue 7.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 300 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests"
grep -E "tests passed|\(Failed\)|\(Skipped\)|Failure|Timeout" "$OUT/gpu_tests.log" | head -20
for p in fp32 bf16; do timeout 150 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; grep -E "FAIL|text_encode" "$OUT/golden_$p.log" | head -5; done
M="mpirun -np 2 --bind-to none"
for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do
  timeout 100 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set $s > "$OUT/g.log" 2>&1
  el "golden bf16 2 GPUs $s: $(tail -1 "$OUT/g.log")"; grep "FAIL" "$OUT/g.log" | head -3
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
