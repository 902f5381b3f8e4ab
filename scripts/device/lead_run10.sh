#!/usr/bin/env bash
# Device run 10 (lead, two H200s): async Ulysses - build; device attention parity on 2 ranks (sync
# and async); golden bf16 on 2 GPUs with ulysses 2 async; DiT 720p ulysses 2 sync vs async.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 150 ctest -R "device_attention|nccl" --output-on-failure --timeout 100 > "$OUT/dev_attn.log" 2>&1); el "device attention tests"
grep -E "tests passed|\(Failed\)|\(Skipped\)|parity OK|FAIL" "$OUT/dev_attn.log" | head -12
M="mpirun -np 2 --bind-to none"
timeout 100 $M $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=bf16 --set parallel_config.ulysses_size=2 --set parallel_config.async_ulysses=true > "$OUT/g.log" 2>&1
el "golden bf16 2 GPUs ulysses 2 async: $(tail -1 "$OUT/g.log")"; grep "FAIL" "$OUT/g.log" | head -3
D=$(find $B -name vgen_dit_bench -type f | head -1)
for a in "" --async-ulysses; do
  timeout 75 $M $D --mode ulysses $a --shapes 720p --layers 40 --reps 2 --warmup 1 --no-profile --out "$OUT/vgen_dit_uly.jsonl" > "$OUT/dit_uly$a.log" 2>&1; el "ulysses $a"; grep "^#.*720p\|rror" "$OUT/dit_uly$a.log" | head -3
done
cd "$OUT" && tar czf logs.tgz *.log gpu_check 2>/dev/null && rm -rf *.log gpu_check
