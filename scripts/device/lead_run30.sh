#!/usr/bin/env bash
# Device run 30 (lead, two H200s): DWDP in 2 MiB slices dealt round-robin over the group (every
# block assembled from every source, DESIGN.md). All gpu tests (dwdp_np2: bit-identical to the whole
# model); vgen golden on two GPUs in fp32 and bf16 for cfg 2, ulysses 2, ring 2, attn2d 1x2,
# ulysses 2 + parallel VAE 2, and bf16 with dwdp 2; the DWDP cost at 480p cfg 2 and 720p ulysses 2.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 200 ctest -L gpu --output-on-failure --timeout 150 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Timeout|parity" "$OUT/gpu_tests.log" | head -12
M="mpirun -np 2 --bind-to none"
g() { timeout 40 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$1 --set $2 > "$OUT/g.log" 2>&1; el "golden $1 2 GPUs $2: $(tail -1 "$OUT/g.log")"; grep FAIL "$OUT/g.log" | head -3; }
for p in fp32 bf16; do for s in parallel_config.cfg_size=2 parallel_config.ulysses_size=2 parallel_config.ring_size=2 parallel_config.attn2d_size=[1,2] "parallel_config.ulysses_size=2 --set parallel_config.parallel_vae_size=2"; do g $p "$s"; done; done
g bf16 "parallel_config.cfg_size=2 --set parallel_config.dwdp_size=2"; g bf16 "parallel_config.ulysses_size=2 --set parallel_config.dwdp_size=2"
D=$(find $B -name vgen_dit_bench -type f | head -1)
r() { timeout 75 $M $D --mode $1 --dwdp $2 --shapes $3 --layers 40 --reps 3 --warmup 1 --no-profile --tag "dwdp$2" --out "$OUT/vgen_dit.jsonl" > "$OUT/d.log" 2>&1; el "$1 $3 dwdp $2 rc=$?"; grep "^#\|rror" "$OUT/d.log" | head -3; }
r cfg 1 480p; r cfg 2 480p; r ulysses 2 720p; r ulysses 1 720p
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
