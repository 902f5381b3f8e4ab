#!/usr/bin/env bash
# Device run 51 (session 9, one H200; it replaces runs 49 and 50, prepared in session 8 and never run): correctness first. The plan (every gpu test, including
# the first-block cache's device path and the reduce kernels that never ran on a GPU; vgen golden in
# fp32 and bf16; the tiny model with the cache on, CPU against CUDA), then the tail kernel with one
# Q tile per warp (VGEN_EXP_TAIL_QBUF=1) through its tests, and the hoisted RoPE table loads (new
# default) against the per-vector loads (VGEN_EXP_ROPE_NO_HOIST=1) in GB/s.
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 32 > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
(cd $B && timeout 280 ctest -L gpu -j 2 --output-on-failure --timeout 200 > "$OUT/gpu_tests.log" 2>&1); el "gpu tests: $(grep 'tests passed' "$OUT/gpu_tests.log")"
grep -E "\(Failed\)|Failure|Expected|Which is|Timeout|expected|Not Run" "$OUT/gpu_tests.log" | head -16
for p in fp32 bf16; do timeout 60 $B/bin/vgen golden --fixtures tests/golden --set device=cuda --set precision=$p > "$OUT/golden_$p.log" 2>&1; el "golden 1 GPU $p: $(tail -1 "$OUT/golden_$p.log")"; done
for i in 1 2 3; do echo "prompt number $i, a small red cube turns"; done > "$OUT/p.txt"
for d in cpu cuda; do
  timeout 120 $B/bin/vgen run --recipe recipes/demo-cpu.yaml --set device=$d --set precision=fp32 \
    --set model=tests/golden/wan21-tiny --set generation.height=32 --set generation.width=48 --set generation.num_frames=9 \
    --set generation.num_inference_steps=8 --set generation.max_sequence_length=8 --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --set cache_config.first_block_threshold=0.1 --prompts "$OUT/p.txt" --out "$OUT/fb_$d" > "$OUT/fb_$d.log" 2>&1
  el "fbcache $d rc=$?: $(python3 -c "import json; print([v.get('first_block_cache') for v in json.load(open('$OUT/fb_$d/timing.json'))['videos']])" 2>&1)"
  tail -3 "$OUT/fb_$d.log"
done
T=$(find $B -name test_attention_gpu -type f | head -1); C=$(find $B -name test_attention_cudnn_gpu -type f | head -1)
VGEN_EXP_TAIL_QBUF=1 timeout 60 $T --gtest_filter='*Tail*' > "$OUT/q1_tail.log" 2>&1; el "QBUF=1 tail tests: $(tail -1 "$OUT/q1_tail.log")"
VGEN_EXP_TAIL_QBUF=1 timeout 90 $C --gtest_filter='*KeyChunks*' > "$OUT/q1_chunks.log" 2>&1; el "QBUF=1 key chunks: $(tail -1 "$OUT/q1_chunks.log")"
K=$(find $B -name cuda_kernels_bench -type f | head -1)
for h in 0 1 1 0; do VGEN_EXP_ROPE_NO_HOIST=$h timeout 60 $K --dit-ops > "$OUT/ops_h$h.log" 2>&1; echo "NO_HOIST=$h: $(grep -E 'rms_norm_rope|layer_norm_modulate' "$OUT/ops_h$h.log" | tr -s ' ' | tr '\n' ';')"; done
el done
cd "$OUT" && rm -rf fb_*/*.mp4 && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
