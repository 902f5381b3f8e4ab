#!/usr/bin/env bash
# Device run 39 (lead, two H200s; prepared in session 6 for the next session with a two-GPU machine):
# the residual adds in the GEMM epilogues (fc29a1c) and the DWDP changes 0bdc12a / 647aea0 have not
# run on two GPUs. All gpu tests (dwdp_np2, dwdp_np2_slices, nccl_comm_np2); vgen golden on two GPUs in
# fp32 and bf16 for cfg 2, ulysses 2, ring 2, attn2d 1x2, ulysses 2 + parallel VAE 2, bf16 with dwdp 2;
# then 720p (40 layers) on one GPU and per 2-GPU mode (issue 7's speedups).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 220 ctest -L gpu --output-on-failure --timeout 160 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Timeout" "$OUT/gpu_tests.log" | head -12
M="mpirun -np 2 --bind-to none"
g() { timeout 40 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$1 --set $2 > "$OUT/g.log" 2>&1; el "golden $1 2 GPUs $2: $(tail -1 "$OUT/g.log")"; grep FAIL "$OUT/g.log" | head -3; }
for p in fp32 bf16; do for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do g $p "$s"; done; done
g bf16 "parallel_config.cfg_size=2 --set parallel_config.dwdp_size=2"; g bf16 "parallel_config.ulysses_size=2 --set parallel_config.dwdp_size=2"
D=$(find $B -name vgen_dit_bench -type f | head -1)
CUDA_VISIBLE_DEVICES=0 timeout 90 $D --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --tag single --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_single.log" 2>&1; el "single"; grep "^#.*tokens" "$OUT/dit_single.log"
for m in ring attn2d ulysses cfg; do
  timeout 80 $M $D --mode $m --shapes 720p --layers 40 --reps 3 --warmup 1 --no-profile --tag $m --out "$OUT/vgen_dit.jsonl" > "$OUT/dit_$m.log" 2>&1; el "$m"; grep "^#.*tokens\|error" "$OUT/dit_$m.log" | head -3
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
