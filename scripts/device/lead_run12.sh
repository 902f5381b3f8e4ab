#!/usr/bin/env bash
# Device run 12 (lead, one H200): memory-bound DiT ops at 720p in GB/s and the Q/K/V GEMMs split
# against fused (cuda_kernels_bench --dit-ops); SM clock and power while cuDNN SDPA runs long
# (75,600 tokens) and short (16,384) kernels: is the sustained attention rate power-limited?
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
cmake --build $B -j 16 --target cuda_kernels_bench attention_bench > "$OUT/build.log" 2>&1; el "build rc=$?"; grep -E " error" "$OUT/build.log" | head -5
nvidia-smi --query-gpu=power.limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv
$(find $B -name cuda_kernels_bench -type f | head -1) --dit-ops; el "dit ops"
AB=$(find $B -name attention_bench -type f | head -1)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 50 > "$OUT/smi.csv" &
SMI=$!
sleep 0.5; echo "--- long"; $AB --cudnn-only --kv 75520 75600 2>&1 | grep -o '"S":.*"tflops":[0-9.]*' | head -1
sleep 2; echo "--- short"; $AB --cudnn-only --heads 40 16384 2>&1 | grep -o '"S":.*"tflops":[0-9.]*' | head -1
sleep 1; kill $SMI
awk -F', ' '{print $2, $3, $4, $5}' "$OUT/smi.csv" | uniq -c | head -80
