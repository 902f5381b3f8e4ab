#!/usr/bin/env bash
# Device run 43 (prepared in session 7 for the next session's first call on nvidia-h200-x2): what
# session 7 changed after its last GPU call, compiled here but never run on a GPU:
# vgen_dit_bench's strict --mode parser (every two-GPU mesh, a bad one), vgen_vae_bench's parallel
# decode compared with one rank's (vs_one_rank), and run_scaling.sh after its review (per-shape
# skips, golden with parallel_vae_size, budgets), as a 2-layer dry run into a fresh directory.
# On 4 or 8 GPUs run scripts/bench/run_scaling.sh itself (issue 9), in as many calls as it needs.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
D=$(find $B -name vgen_dit_bench -type f | head -1); V=$(find $B -name vgen_vae_bench -type f | head -1)
for m in cfg2 ulysses2 ring2 attn2d1x2 cfg ulysses2-ulysses2; do
  timeout 60 mpirun -np 2 --bind-to none $D --mode $m --cfg-step --shapes 480p --layers 2 --reps 1 --warmup 1 --no-profile \
    > "$OUT/m_$m.log" 2>&1; el "dit --mode $m rc=$?: $(grep -h '^#.*tokens\|vgen_dit_bench:' "$OUT/m_$m.log" | head -1)"
done
for sd in width height; do
  timeout 90 mpirun -np 2 --bind-to none $V --shapes 720p --reps 1 --split-dim $sd > "$OUT/v_$sd.log" 2>&1
  el "vae 2 ranks split $sd rc=$?: $(grep -h 'parallel vs one rank\|DIFFERS' "$OUT/v_$sd.log" | head -2 | tr '\n' ' ')"
done
rm -rf $B/scaling
SHAPES=720p,480p LAYERS=2 REPS=1 BUDGET_S=300 bash scripts/bench/run_scaling.sh dit vae golden e2e plot > "$OUT/scaling.log" 2>&1
el "run_scaling rc=$?"; grep "^\[scaling\]\|x  \|x$" "$OUT/scaling.log" | head -40
cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
