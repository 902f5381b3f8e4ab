#!/usr/bin/env bash
# Device run 49 (prepared in session 8 for the next session's first call, one H200 is enough): the
# first-block cache's device path has compiled but never run on a GPU. Its gpu tests (the reduce
# and sub kernels against their CPU references; the device DiT with the cache: never / always /
# the CPU's decision), every other gpu test, and vgen golden in fp32 and bf16 on one GPU; then a
# CPU-vs-GPU sanity run of `vgen run` with the tiny model and the cache on (timing.json hits).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 300 ctest -L gpu --output-on-failure --timeout 200 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected" "$OUT/gpu_tests.log" | head -16
for p in fp32 bf16; do timeout 60 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
for i in 1 2 3; do echo "prompt number $i, a small red cube turns"; done > "$OUT/p.txt"
for d in cpu cuda; do
  timeout 120 $B/bin/vgen run --recipe recipes/demo-cpu.yaml --set device=$d --set precision=fp32 \
    --set model=tests/golden/wan21-tiny --set generation.height=32 --set generation.width=48 --set generation.num_frames=9 \
    --set generation.num_inference_steps=8 --set generation.max_sequence_length=8 --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --set cache_config.first_block_threshold=0.1 --prompts "$OUT/p.txt" --out "$OUT/fb_$d" > "$OUT/fb_$d.log" 2>&1
  el "fbcache $d rc=$?: $(python3 -c "import json; print([v.get('first_block_cache') for v in json.load(open('$OUT/fb_$d/timing.json'))['videos']])" 2>&1)"
done
cd "$OUT" && rm -rf fb_*/*.mp4 && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
