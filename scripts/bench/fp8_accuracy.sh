#!/usr/bin/env bash
# Accuracy at real shapes on the GPU machine, from the repository root (docs/performance.md,
# "Accuracy at real shapes"): each step is skipped when its result is already there.
#   1. vgen: configured through scripts/device/gpu_check.sh and built (target vgen only) in build-gpu
#   2. the checkpoint: make_random_checkpoint.py --init trained-like --gain $GAIN --text-layers
#      $TEXT_LAYERS into $MODEL (31.7 GB with 2 text layers; the 64 GiB disk of a one-H200 machine
#      does not also hold the 40.2 GB timing checkpoint)
#   3. the diffusers wheel of .whl/ into /tmp/site (no network)
#   4. scripts/bench/fp8_accuracy.py --model $MODEL --vgen <build>/bin/vgen --json $JSON --reuse
#      --budget-s <what is left> "$@" (its options: --shapes 480p,720p, --steps 1,4, --variant ...)
# Usage: scripts/bench/fp8_accuracy.sh [fp8_accuracy.py options]
#        scripts/bench/fp8_accuracy.sh --prepare   # steps 1-3 only (a first build may need its own call)
# Environment: MODEL (default <build>/random-wan21-14b-trained-like), GAIN (1.0), TEXT_LAYERS (2),
# VGEN_GPU_BUILD (build-gpu), JOBS (nproc), BUDGET_S (seconds for the whole call, default 570; no
# render starts in its last MARGIN, 90, seconds), JSON
# (default $OUT/accuracy.json when OUT is set, else results/fp8_accuracy/1x<gpu>/<date>_1x<gpu>_accuracy.json), WORK
# (/tmp/vgen_accuracy), VGEN_COMMIT (the commit to record where the copy has no .git).
# Logs: <build>/accuracy_logs (copied to $OUT/accuracy_logs when OUT is set).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
MODEL=${MODEL:-$BUILD/random-wan21-14b-trained-like}
GAIN=${GAIN:-1.0}
TEXT_LAYERS=${TEXT_LAYERS:-2}
BUDGET_S=${BUDGET_S:-570}
WORK=${WORK:-/tmp/vgen_accuracy}
LOG=$BUILD/accuracy_logs
PREPARE=0
if [ "${1:-}" = "--prepare" ]; then PREPARE=1; shift; fi
mkdir -p "$LOG"
say() { echo "[accuracy.sh] $*"; }
finish() {
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/accuracy_logs" && cp -r "$LOG"/. "$OUT/accuracy_logs/"; fi
  exit "$1"
}

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
[ -d "$ROOT/.dev/deps/openblas/lib" ] && export LD_LIBRARY_PATH=$ROOT/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T0=$(date +%s)

# 1. vgen
VGEN=$BUILD/bin/vgen
if [ ! -x "$VGEN" ]; then
  t=$(date +%s)
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    VGEN_GPU_BUILD=$BUILD OUT=$LOG "$ROOT/scripts/device/gpu_check.sh" --configure-only > "$LOG/configure.log" 2>&1 ||
      { tail -20 "$LOG/configure.log"; say "configure failed (configure.log)"; finish 3; }
  fi
  cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target vgen > "$LOG/build.log" 2>&1 ||
    { grep -E "error" "$LOG/build.log" | head -20; say "build failed (build.log)"; finish 3; }
  say "built vgen in $(( $(date +%s) - t )) s"
fi

# 2. the trained-like checkpoint (model_index.json is written last: its presence marks a complete one)
if [ ! -f "$MODEL/model_index.json" ]; then
  t=$(date +%s)
  python3 "$ROOT/scripts/bench/make_random_checkpoint.py" --out "$MODEL" --overwrite --init trained-like \
    --gain "$GAIN" --text-layers "$TEXT_LAYERS" > "$LOG/make_model.log" 2>&1 ||
    { tail -5 "$LOG/make_model.log"; rm -rf "$MODEL"; say "checkpoint write failed (make_model.log)"; finish 2; }
  say "checkpoint $MODEL in $(( $(date +%s) - t )) s: $(tail -1 "$LOG/make_model.log")"
else
  say "checkpoint $MODEL: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$MODEL/random_init.json" 2>/dev/null || echo 'no random_init.json')"
fi

# 3. diffusers (pure Python; --no-deps: torch, transformers, safetensors and numpy are there)
whl=$(ls "$ROOT"/.whl/diffusers-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || { say "no .whl/diffusers-*.whl (copy a diffusers wheel into .whl/)"; finish 2; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$whl" \
  > "$LOG/pip.log" 2>&1 || { tail -5 "$LOG/pip.log"; say "pip install of $whl failed"; finish 2; }
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
[ "$PREPARE" = 1 ] && { say "prepared: $VGEN, $MODEL, $whl"; finish 0; }

# 4. the renders and the comparison
if [ -z "${JSON:-}" ]; then
  if [ -n "${OUT:-}" ]; then JSON=$OUT/accuracy.json
  else
    slug=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr '[:upper:]' '[:lower:]' |
           sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
    JSON=$ROOT/results/fp8_accuracy/1x${slug:-gpu}/$(date -u +%F)_1x${slug:-gpu}_accuracy.json
  fi
fi
# the renders stop starting new work $MARGIN s before the budget (a diffusers fp32 load + render
# takes ~60-90 s at 480p), so the JSON is written within it
left=$(( BUDGET_S - ($(date +%s) - T0) - ${MARGIN:-90} ))
[ "$left" -gt 30 ] || { say "only $left s of BUDGET_S left after the preparation: call again (steps 1-3 are kept)"; finish 4; }
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} python3 "$ROOT/scripts/bench/fp8_accuracy.py" --model "$MODEL" \
  --vgen "$VGEN" --json "$JSON" --work "$WORK" --reuse --budget-s "$left" "$@" \
  2>&1 | tee "$LOG/accuracy.log"
rc=${PIPESTATUS[0]}
for d in "$WORK"/*/; do
  [ -d "$d" ] || continue
  mkdir -p "$LOG/$(basename "$d")" && cp "$d"/*.log "$d"/recipe.yaml "$LOG/$(basename "$d")/" 2>/dev/null
done
say "rc $rc; $JSON"
finish "$rc"
