#!/usr/bin/env bash
# The GPU harness: on the GPU machine, from the repository root, configures and builds vgen (CUDA,
# no FFmpeg, build dir build-gpu), runs the named suites in the order given and appends one JSON
# record per measurement to the results file (date, GPU, GPU count, commit, suite, impl, the
# command's arguments, the numbers in "result"), then prints a short table.
#
# Usage: scripts/bench/gpu_suite.sh [--dry-run] [--no-build] [--results FILE] [--build DIR] SUITE...
#   tests    ctest -L gpu (every gpu test; the two-GPU tests report skipped on one GPU)
#   golden   vgen golden --fixtures tests/golden on the device, fp32 and bf16; with two GPUs or more
#            also bf16 on cfg 2, ulysses 2, ring 2, attn2d 1x2, ulysses 2 + parallel VAE 2, cfg 2 +
#            dwdp 2 and ulysses 2 + dwdp 2
#   dit      vgen_dit_bench: the Wan2.1-14B DiT forward (random bf16 weights) at $SHAPES, $LAYERS
#            layers, warm-up 1, median of $REPS, on GPU 0; with two GPUs or more also $DIT_MODES at
#            $MODE_SHAPES on two ranks (in the first dit of a call only)
#   vae      vgen_vae_bench: the Wan 2.1 VAE decode at $SHAPES in bf16 on GPU 0; with two GPUs or
#            more also the parallel VAE on two ranks at 720p
#   peer     the diffusers peer on GPU 0 (scripts/bench/peer/diffusers_wan_bench.py), same shapes
#            and timing: the DiT forward when this call runs `dit`, the VAE decode when it runs
#            `vae`, both when it runs neither ($PEER_WHAT overrides: "dit", "vae" or "dit vae")
#   load     `vgen run --load-only` (its <out>/load.json) against the peer's WanPipeline.from_pretrained(...).to("cuda")
#            (scripts/bench/peer/diffusers_load_bench.py) on the random 14B checkpoint, each a fresh
#            process on GPU 0, in the order $LOAD_ORDER (default "vgen peer peer vgen")
#   e2e      one video 480x832x81, 4 steps, guidance 5, on GPU 0: `vgen run` against the peer's
#            WanPipeline call, each a fresh process that loads and renders, order $E2E_ORDER
#            (default "vgen peer"): load, render and wall seconds
#   lora     a random rank-$LORA_RANK adapter at the checkpoint's shapes (make_random_lora.py): the
#            merge's cost (--load-only without/with it, ABBA) and one video at $LORA_SHAPES x 81
#            frames with the distilled schedule (4 steps, guidance 1, Euler, shift 5, merged) against
#            the default (guidance 5; $LORA_DEFAULT_STEPS steps run, the per-step DiT time x 50 recorded)
#   scaling  scripts/bench/run_scaling.sh dit vae: one CFG step per mesh of this GPU count and the
#            parallel VAE over 1, 2, 4, ... ranks (new measurements only are recorded)
#   attn     the FP8 attention kernel alone against its peer at $ATTN_S tokens (default 75600; several
#            lengths space-separated) × 40
#            heads × 128, on GPU 0, in the order $ATTN_ORDER (default "vgen peer peer vgen"): vgen's
#            attention_fp8_bench (its bf16 and FP8 Hopper kernels) and cuDNN's FP8 SDPA through
#            cudnn-frontend's Python graph (scripts/bench/peer/cudnn_fp8_attention_bench.py, the same
#            data and timing rule; needs .whl/nvidia_cudnn_frontend-*-cp312-*.whl); ATTN_SUSTAIN=SECONDS
#            also times each one's FP8 run back to back for that long (the rate at the power cap)
#   dit_i2v, vae22, peer_i2v, ti2v, i2v_batch: image-to-video (scripts/bench/gpu_suite_i2v.sh has the
#            details): the I2V-14B DiT forward at $SHAPES (vgen_dit_bench --config, DIT_FP8 as for dit),
#            the Wan 2.2 VAE decode at $VAE22_SHAPES (704x1280x121) with peak memory, the peer of
#            whichever of those ran (diffusers_i2v_bench.py), one TI2V-5B video 704x1280x121 (4 steps,
#            guidance 5, an image) against WanImageToVideoPipeline in $E2E_ORDER, and one job of
#            $I2V_LINES (8) image lines on a random I2V-14B of $I2V_LAYERS (10) layers (each video's
#            seconds, the first against the rest)
#   cosmos3, cosmos3_e2e: Cosmos 3 (scripts/bench/gpu_suite_cosmos3.sh has the details): one CFG step of
#            the DiT (vgen_cosmos3_bench: the prefill once, the generation tower's two forwards) against
#            diffusers_cosmos3_bench.py dit (two whole forwards) at $COSMOS_SHAPES (720p: 720x1280x189),
#            $COSMOS_LAYERS (12) layers of $COSMOS_CONFIG (Nano), in $COSMOS_ORDER; one video (35 steps, CFG
#            6) through `vgen run --recipe recipes/1gpu-cosmos3-nano-720p.yaml` against Cosmos3OmniPipeline
#            on a random Nano of $COSMOS_E2E_LAYERS (12) layers, in $E2E_ORDER
#   build    configure and build every target, nothing else (a first full build may need a call
#            of its own: the build dir is kept while the machine stays up)
#   all      tests golden dit peer vae
# A suite may be named twice: `dit peer peer dit` times vgen and the peer in ABBA order, so the
# GPU's warming favours neither. load and e2e use $MODEL (default <build>/random-wan21-14b), made
# by scripts/bench/make_random_checkpoint.py when it is missing (40.2 GB, a few minutes).
#
# Output: records go to $OUT/gpu_suite.jsonl when OUT is set (the GPU machine's output folder;
# append them to a file in results/<suite>/<N>x<gpu>/ afterwards, results/README.md), else to
# results/<date>_<N>x<gpu>_gpu_suite.jsonl (one call may run several suites: file it by hand);
# --results FILE overrides both. Logs: <build>/gpu_suite_logs, packed into $OUT/gpu_suite_logs.tgz
# with $OUT/summary.txt. Exit status: 0, 1 when a test or golden case failed, 2 when a dependency
# is missing, 3 when configure or build fails.
#
# The GPU machine has no network: copy .dev/deps (scripts/device/pack_deps.sh: GoogleTest,
# OpenBLAS, nlohmann-json; plus cudnn_frontend/include) and .whl (a diffusers wheel, for peer, load
# and e2e) with the working tree. VGEN_COMMIT names the commit where the copy has no .git.
# --dry-run prints every command instead of running it and writes records marked dry_run (to a
# scratch file unless --results is given); DRY_GPUS=N pretends N GPUs.
# Environment: VGEN_GPU_BUILD (build dir), JOBS (build jobs, default nproc), SHAPES (default
# 480p,720p), LAYERS (40), REPS (3), I2V_DIT_CONFIG, VAE22_CONFIG, VAE22_SHAPES, PEER_I2V_WHAT, TI2V_MODEL,
# TI2V_IMAGE, I2V_MODEL, I2V_LAYERS, I2V_RECIPE, I2V_LINES, I2V_STEPS (gpu_suite_i2v.sh), COSMOS_CONFIG,
# COSMOS_LAYERS, COSMOS_SHAPES, COSMOS_PROMPT_TOKENS, COSMOS_UNCOND_TOKENS, COSMOS_STEPS, COSMOS_ORDER,
# COSMOS_FP8, COSMOS_MODEL, COSMOS_E2E_LAYERS, COSMOS_E2E_STEPS (gpu_suite_cosmos3.sh), DIT_MODES (two GPUs: "cfg ulysses ring attn2d"), MODE_SHAPES
# (720p), PEER_WHAT, MODEL, LOAD_ORDER, E2E_ORDER, LORA_RANK (64), LORA_SHAPES (480p,720p), LORA_DEFAULT_STEPS (3), DIT_FP8 (all|attention|gemm: the dit suite's forwards in precision fp8; e.g. `DIT_FP8=all gpu_suite.sh dit peer`), DIT_FP8_QK (e4m3|int8: their self-attention's Q·Kᵀ, default e4m3), DIT_FP8_GEMM (int8|e4m3: their block linears' GEMM format, default int8), DIT_ATTN (auto|native|cudnn: the dit suite's attention_config.backend; `DIT_ATTN=cudnn DIT_FP8=all DIT_FP8_GEMM=e4m3` times the portable fp8 paths on Hopper), DIT_MODEL (a Diffusers checkpoint: the dit suite's one-GPU forwards and the peer's on its transformer's weights, e.g. the trained-like one of fp8_accuracy.sh, instead of random ones; its config sets the layers), DROP_CACHES=1 (drop the page cache before each
# load, where permitted), BUDGET_S (seconds for the whole call, default 570: a suite that no longer
# fits is skipped and said so), VGEN_COMMIT.
# shellcheck disable=SC2317  # the suites are called as suite_$name
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
DRY=0
NO_BUILD=0
RESULTS=""
SUITES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --no-build) NO_BUILD=1 ;;
    --results) RESULTS=$2; shift ;;
    --build) BUILD=$2; shift ;;
    -h|--help) sed -n '2,/^# shellcheck/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    build|tests|golden|dit|vae|peer|load|e2e|lora|scaling|attn) SUITES+=("$1") ;;
    dit_i2v|vae22|peer_i2v|ti2v|i2v_batch|cosmos3|cosmos3_e2e) SUITES+=("$1") ;;
    all) SUITES+=(tests golden dit peer vae) ;;
    *) echo "gpu_suite: unknown suite or option '$1' (suites: build tests golden dit vae peer load e2e lora scaling" \
            "attn dit_i2v vae22 peer_i2v ti2v i2v_batch cosmos3 cosmos3_e2e all)" >&2
       exit 2 ;;
  esac
  shift
done
[ ${#SUITES[@]} -gt 0 ] || { echo "gpu_suite: name at least one suite (--help lists them)" >&2; exit 2; }

JOBS=${JOBS:-$(nproc)}
SHAPES=${SHAPES:-480p,720p}
LAYERS=${LAYERS:-40}
REPS=${REPS:-3}
MODE_SHAPES=${MODE_SHAPES:-720p}
MODEL=${MODEL:-$BUILD/random-wan21-14b}
LOAD_ORDER=${LOAD_ORDER:-vgen peer peer vgen}
E2E_ORDER=${E2E_ORDER:-vgen peer}
LORA_RANK=${LORA_RANK:-64}
LORA_SHAPES=${LORA_SHAPES:-480p,720p}
LORA_DEFAULT_STEPS=${LORA_DEFAULT_STEPS:-3}
ATTN_S=${ATTN_S:-75600}
ATTN_ORDER=${ATTN_ORDER:-vgen peer peer vgen}
BUDGET_S=${BUDGET_S:-570}
LOG=$BUILD/gpu_suite_logs
REC=$ROOT/scripts/bench/gpu_suite_records.py  # the JSON side: records, parsers, the table
WORK=$BUILD/gpu_suite_work
T0=$(date +%s)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

# NVLink multicast stays off; mpirun runs as root there.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The carried OpenBLAS must also be found when the binaries run.
[ -d "$ROOT/.dev/deps/openblas/lib" ] && export LD_LIBRARY_PATH=$ROOT/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VGEN_COMMIT=${VGEN_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}

if [ "$DRY" = 1 ]; then
  NGPU=${DRY_GPUS:-1}
  GPU_NAME="(dry run)"
  if [ -z "$RESULTS" ]; then RESULTS=$BUILD/gpu_suite_dry_run.jsonl; rm -f "$RESULTS"; fi
else
  NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  [ "$NGPU" -gt 0 ] || { echo "gpu_suite: no GPU visible (nvidia-smi -L); --dry-run prints the commands" >&2; exit 2; }
  if [ -z "$RESULTS" ]; then
    if [ -n "${OUT:-}" ]; then RESULTS=$OUT/gpu_suite.jsonl
    else
      slug=$(echo "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
      RESULTS=$ROOT/results/$(date -u +%F)_${NGPU}x${slug}_gpu_suite.jsonl
    fi
  fi
fi
rm -rf "$LOG"
mkdir -p "$LOG" "$WORK" "$(dirname "$RESULTS")"
SUMMARY=$LOG/summary.txt
: > "$SUMMARY"
export GS_GPU="$GPU_NAME" GS_NGPU="$NGPU" GS_DRY="$DRY" GS_INVOCATION="$STAMP"

say() { echo "[gpu_suite] $*" | tee -a "$SUMMARY"; }
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
# enough SECONDS WHAT: whether SECONDS of the budget are left (else says WHAT is skipped)
enough() {
  [ "$DRY" = 1 ] && return 0
  if [ "$(left)" -lt "$1" ]; then say "SKIPPED $2: $(left) s of the budget left, needs ~$1 s"; return 1; fi
}
# cap SECONDS: a time limit of SECONDS, or what the budget has left (at least 1)
cap() { local l; l=$(( $(left) - 10 )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
has_suite() { [[ " ${SUITES[*]} " == *" $1 "* ]]; }
# x LOG SECONDS CMD...: CMD with stdout and stderr in LOG, under a time limit; printed in a dry run
x() {
  local log=$1 t=$2; shift 2
  if [ "$DRY" = 1 ]; then echo "+ $*  > ${log#"$ROOT"/}" | tee -a "$SUMMARY"; : > "$log"; return 0; fi
  timeout "$t" "$@" > "$log" 2>&1
}
now() { date +%s.%N; }
since() { python3 "$REC" since "$1" "$(now)"; }

# emit SUITE IMPL ARGS RESULT: appends one record (RESULT a JSON object) or, with RESULT @FILE, one
# per JSON line of FILE
EMIT_FAILED=0
emit() { python3 "$REC" emit "$@" >> "$RESULTS" || { EMIT_FAILED=1; say "a $1 record could not be written"; }; }

finish() {
  if [ -n "${OUT:-}" ] && [ "$DRY" != 1 ]; then
    mkdir -p "$OUT"
    cp "$SUMMARY" "$OUT/summary.txt"
    tar czf "$OUT/gpu_suite_logs.tgz" -C "$LOG" . 2>/dev/null
  fi
  exit "$1"
}

say "start $STAMP: $NGPU GPU(s) $GPU_NAME, commit $VGEN_COMMIT, suites: ${SUITES[*]}; records to $RESULTS"

# ---- configure and build (only the targets the suites need; every target for `tests`)
VGEN=$BUILD/bin/vgen
DIT=$BUILD/tests/vgen_dit_bench
VAE=$BUILD/tests/vgen_vae_bench
TARGETS=()
if has_suite golden || has_suite load || has_suite e2e || has_suite lora || has_suite ti2v || has_suite i2v_batch ||
   has_suite cosmos3_e2e; then
  TARGETS+=(vgen)
fi
if has_suite dit || has_suite dit_i2v; then TARGETS+=(vgen_dit_bench); fi
if has_suite vae || has_suite vae22; then TARGETS+=(vgen_vae_bench); fi
if has_suite attn; then TARGETS+=(attention_fp8_bench); fi
if has_suite cosmos3; then TARGETS+=(vgen_cosmos3_bench); fi
if has_suite scaling; then TARGETS+=(vgen vgen_dit_bench vgen_vae_bench); fi
if [ "$NO_BUILD" != 1 ] && { has_suite tests || has_suite build || [ ${#TARGETS[@]} -gt 0 ]; }; then
  # scripts/device/gpu_check.sh finds the dependencies (system, else the copies in .dev/deps) and configures.
  if [ "$DRY" = 1 ]; then
    echo "+ VGEN_GPU_BUILD=$BUILD scripts/device/gpu_check.sh --configure-only" | tee -a "$SUMMARY"
  else
    VGEN_GPU_BUILD=$BUILD OUT=$LOG "$ROOT/scripts/device/gpu_check.sh" --configure-only > "$LOG/configure.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
      tail -20 "$LOG/configure.log"
      say "configure failed, rc $rc (configure.log, gpu_check/)"
      finish $(( rc == 2 ? 2 : 3 ))
    fi
  fi
  # Every target for tests (the gpu tests need the test binaries and vgen) and build.
  if has_suite tests || has_suite build; then TARGETS=(); fi
  T1=$(date +%s)
  tflags=()
  [ ${#TARGETS[@]} -gt 0 ] && tflags=(--target "${TARGETS[@]}")
  x "$LOG/build.log" "$(cap 3600)" cmake --build "$BUILD" -j "$JOBS" "${tflags[@]}"
  rc=$?
  if [ "$rc" -eq 124 ]; then
    say "build stopped at the budget after $(( $(date +%s) - T1 )) s; $BUILD is kept: call again to go on"
    finish 3
  elif [ "$rc" -ne 0 ]; then
    grep -E "error" "$LOG/build.log" | head -30
    say "build failed, rc $rc (build.log)"
    finish 3
  fi
  say "build (${TARGETS[*]:-all targets}) $(( $(date +%s) - T1 )) s, warnings: $(grep -c 'warning' "$LOG/build.log")"
fi

# The carried image libraries, where the build links them (gpu_check.sh: no system libpng-dev).
if grep -q "^PNG_LIBRARY_RELEASE:FILEPATH=$ROOT/.dev/deps/images/" "$BUILD/CMakeCache.txt" 2>/dev/null; then
  export LD_LIBRARY_PATH=$ROOT/.dev/deps/images/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

# ---- carried wheels, each installed once per call: wheel_env NAME GLOB TARGET HINT installs the
# first .whl/GLOB into TARGET (0) or says why it cannot (1); the answer is kept for later calls.
declare -A WHEEL_READY=()
wheel_env() {
  local name=$1 glob=$2 target=$3 hint=$4 whl
  [ -n "${WHEEL_READY[$name]:-}" ] && { [ "${WHEEL_READY[$name]}" = ok ]; return; }
  whl=$(ls "$ROOT"/.whl/$glob 2>/dev/null | head -1)
  if [ -z "$whl" ] && [ "$DRY" != 1 ]; then
    say "no .whl/$glob: the $name cannot run ($hint)"
    WHEEL_READY[$name]=no; return 1
  fi
  x "$LOG/${name// /_}_install.log" 300 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target "$target" "${whl:-.whl/$glob}" || say "pip install of $whl failed (${name// /_}_install.log)"
  WHEEL_READY[$name]=ok
}
peer_env() { wheel_env peer 'diffusers-*.whl' /tmp/site "copy a diffusers wheel into .whl/"; }
PEER_ENV=(env CUDA_VISIBLE_DEVICES=0 PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1)

# ---- suites
FAILED=0
N=0  # sequence number of a suite in this call (log names)

suite_build() { :; }  # the build above is all it does

suite_tests() {
  enough 150 "tests" || return
  x "$LOG/tests_$N.log" "$(cap 450)" ctest --test-dir "$BUILD" -L gpu -j 2 --output-on-failure --timeout 300
  local rc=$?
  local res
  res=$(python3 "$REC" ctest "$LOG/tests_$N.log" "$rc")
  emit tests vgen "ctest -L gpu -j 2 --timeout 300" "$res"
  [ "$rc" -eq 0 ] || FAILED=1
  say "tests rc $rc: $(grep -E 'tests passed' "$LOG/tests_$N.log")"
}

golden_one() {  # golden_one NAME NP PRECISION SETS...
  local name=$1 np=$2 prec=$3; shift 3
  local cmd=("$VGEN" golden --fixtures "$ROOT/tests/golden" --set device=cuda --set "precision=$prec")
  local s
  for s in "$@"; do cmd+=(--set "$s"); done
  [ "$np" -gt 1 ] && cmd=(mpirun -np "$np" --bind-to none "${cmd[@]}")
  local log=$LOG/golden_${N}_${name}_$prec.log
  x "$log" "$(cap 180)" "${cmd[@]}"
  local rc=$?
  local last passed failed
  last=$(tail -1 "$log")
  passed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' <<< "$last")
  failed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' <<< "$last")
  emit golden vgen "${cmd[*]#"$ROOT"/}" \
    "{\"mesh\": \"$name\", \"ranks\": $np, \"precision\": \"$prec\", \"passed\": ${passed:-null}, \"failed\": ${failed:-null}, \"rc\": $rc}"
  [ "$rc" -eq 0 ] || { FAILED=1; grep -E "FAIL|rror" "$log" | head -3; }
  say "golden $name $prec ($np GPU): rc $rc, $last"
}
suite_golden() {
  enough 60 "golden" || return
  local p
  for p in fp32 bf16; do golden_one one_gpu 1 "$p"; done
  [ "$NGPU" -ge 2 ] || return
  local meshes=(
    "cfg2 parallel_config.cfg_size=2"
    "ulysses2 parallel_config.ulysses_size=2"
    "ring2 parallel_config.ring_size=2"
    "attn2d1x2 parallel_config.attn2d_size=[1,2]"
    "ulysses2_pvae2 parallel_config.ulysses_size=2 parallel_config.parallel_vae_size=2"
    "cfg2_dwdp2 parallel_config.cfg_size=2 parallel_config.dwdp_size=2"
    "ulysses2_dwdp2 parallel_config.ulysses_size=2 parallel_config.dwdp_size=2")
  local m parts
  for m in "${meshes[@]}"; do
    read -r -a parts <<< "$m"  # word splitting without globbing ([1,2])
    enough 40 "golden ${parts[0]}" || return
    golden_one "${parts[0]}" 2 bf16 "${parts[@]:1}"
  done
}

suite_dit() {
  enough 120 "dit" || return
  local out=$WORK/dit_$N.jsonl
  rm -f "$out"
  local args=(--shapes "$SHAPES" --reps "$REPS" --warmup 1 --no-profile --tag "dit$N")
  if [ -n "${DIT_MODEL:-}" ]; then args+=(--model "$DIT_MODEL"); else args+=(--layers "$LAYERS"); fi
  [ -n "${DIT_FP8:-}" ] && args+=(--fp8 "$DIT_FP8")
  [ -n "${DIT_FP8:-}" ] && [ -n "${DIT_FP8_QK:-}" ] && args+=(--fp8-qk "$DIT_FP8_QK")
  [ -n "${DIT_FP8:-}" ] && [ -n "${DIT_FP8_GEMM:-}" ] && args+=(--fp8-gemm "$DIT_FP8_GEMM")
  [ -n "${DIT_ATTN:-}" ] && args+=(--attention "$DIT_ATTN")
  x "$LOG/dit_$N.log" "$(cap 400)" env CUDA_VISIBLE_DEVICES=0 "$DIT" "${args[@]}" --out "$out"
  local rc=$?
  say "dit rc $rc: $(grep -h '^#.*tokens' "$LOG/dit_$N.log" | tr '\n' ' ')"
  emit dit vgen "vgen_dit_bench ${args[*]}" "@$out"
  # The two-GPU modes once per call (a repeated dit is for the one-GPU ratio, e.g. in ABBA order).
  [ "$NGPU" -ge 2 ] && [ -z "${DIT_MODES_DONE:-}" ] || return
  DIT_MODES_DONE=1
  local m
  for m in ${DIT_MODES:-cfg ulysses ring attn2d}; do
    enough 90 "dit --mode $m" || return
    out=$WORK/dit_${N}_$m.jsonl
    rm -f "$out"
    args=(--mode "$m" --shapes "$MODE_SHAPES" --layers "$LAYERS" --reps "$REPS" --warmup 1 --no-profile --tag "dit$N")
    x "$LOG/dit_${N}_$m.log" "$(cap 200)" mpirun -np 2 --bind-to none "$DIT" "${args[@]}" --out "$out"
    rc=$?
    say "dit --mode $m (2 GPUs) rc $rc: $(grep -h '^#.*tokens' "$LOG/dit_${N}_$m.log" | tr '\n' ' ')"
    emit dit vgen "mpirun -np 2 vgen_dit_bench ${args[*]}" "@$out"
  done
}

suite_vae() {
  enough 90 "vae" || return
  local out=$WORK/vae_$N.jsonl
  rm -f "$out"
  local args=(--shapes "$SHAPES" --dtype bf16 --reps "$REPS" --tag "vae$N")
  x "$LOG/vae_$N.log" "$(cap 200)" env CUDA_VISIBLE_DEVICES=0 "$VAE" "${args[@]}" --out "$out"
  local rc=$?
  say "vae rc $rc: $(grep -ho '"height":[0-9]*\|"seconds":[0-9.]*' "$out" 2>/dev/null | tr '\n' ' ')"
  emit vae vgen "vgen_vae_bench ${args[*]}" "@$out"
  [ "$NGPU" -ge 2 ] || return
  enough 60 "vae on 2 ranks" || return
  out=$WORK/vae_${N}_2.jsonl
  rm -f "$out"
  args=(--shapes 720p --dtype bf16 --reps "$REPS" --split-dim width --tag "vae$N")
  x "$LOG/vae_${N}_2.log" "$(cap 200)" mpirun -np 2 --bind-to none "$VAE" "${args[@]}" --out "$out"
  rc=$?
  say "vae 2 ranks rc $rc"
  emit vae vgen "mpirun -np 2 vgen_vae_bench ${args[*]}" "@$out"
}

suite_peer() {
  enough 120 "peer" || return
  peer_env || return
  local what=${PEER_WHAT:-}
  if [ -z "$what" ]; then
    has_suite dit && what+=" dit"
    has_suite vae && what+=" vae"
    [ -n "$what" ] || what="dit vae"
  fi
  local args=() w sh
  [ -n "${DIT_MODEL:-}" ] && [[ " $what " == *" dit "* ]] && args+=(--model "$DIT_MODEL")
  # The dit suite's block count (vgen_dit_bench --layers) on the peer's random DiT too.
  [ -z "${DIT_MODEL:-}" ] && [[ " $what " == *" dit "* ]] && [ "$LAYERS" != 40 ] && args+=(--layers "$LAYERS")
  for w in $what; do
    for sh in ${SHAPES//,/ }; do
      case $sh in 480p|720p) args+=("$w${sh%p}") ;; *) say "peer: shape $sh not supported by the peer script (480p, 720p)" ;; esac
    done
  done
  local out=$WORK/peer_$N.jsonl
  x "$LOG/peer_$N.log" "$(cap 450)" "${PEER_ENV[@]}" python3 "$ROOT/scripts/bench/peer/diffusers_wan_bench.py" "${args[@]}"
  local rc=$?
  grep '^{' "$LOG/peer_$N.log" > "$out" 2>/dev/null
  say "peer ${args[*]} rc $rc: $(grep -ho '"height": [0-9]*\|"seconds": [0-9.]*' "$out" | tr '\n' ' ')"
  [ "$rc" -eq 0 ] || tail -3 "$LOG/peer_$N.log"
  emit peer diffusers "diffusers_wan_bench.py ${args[*]}" "@$out"
}

# cudnn-frontend's wheel (the FP8 attention peer) into /tmp/cudnn_fe
fe_env() {
  wheel_env "attention peer" 'nvidia_cudnn_frontend-*-cp312-*.whl' /tmp/cudnn_fe \
    "pip download --no-deps --python-version 3.12 --only-binary=:all: nvidia-cudnn-frontend"
}

# attn_run IMPL METRIC LABEL CMD...: run #i of suite_attn; its JSON lines recorded under IMPL
attn_run() {
  local impl=$1 metric=$2 label=$3 log=$LOG/attn_${N}_$i.log out=$WORK/attn_${N}_$i.jsonl rc
  shift 3
  rm -f "$out"
  x "$log" "$(cap 200)" env CUDA_VISIBLE_DEVICES=0 "$@"
  rc=$?
  grep '^{' "$log" > "$out" 2>/dev/null
  say "attn $impl rc $rc: $(grep -ho "\"$metric\": [0-9.]*" "$out" | head -1)"
  [ "$rc" -eq 0 ] || tail -3 "$log"
  emit attn "$impl" "$label" "@$out"
}

suite_attn() {
  local who i=0 SUSTAIN=()
  [ -n "${ATTN_SUSTAIN:-}" ] && SUSTAIN=(--sustain "$ATTN_SUSTAIN")
  for who in $ATTN_ORDER; do
    i=$((i + 1))
    enough 90 "attn $who" || return
    case $who in
      vgen) attn_run vgen fp8_kernel_tflops "attention_fp8_bench ${SUSTAIN[*]} $ATTN_S" \
              "$BUILD/tests/attention_fp8_bench" "${SUSTAIN[@]}" $ATTN_S ;;
      peer) fe_env || continue
            attn_run cudnn fp8_tflops "cudnn_fp8_attention_bench.py ${SUSTAIN[*]} $ATTN_S" \
              PYTHONPATH=/tmp/cudnn_fe PYTHONUNBUFFERED=1 python3 "$ROOT/scripts/bench/peer/cudnn_fp8_attention_bench.py" \
              "${SUSTAIN[@]}" $ATTN_S ;;
      *) say "attn: unknown name '$who' in ATTN_ORDER (vgen, peer)" ;;
    esac
  done
}

# ensure_model: the random 14B checkpoint in $MODEL (written here when missing)
ensure_model() {
  [ -f "$MODEL/model_index.json" ] && return 0
  enough 400 "the random checkpoint" || return 1
  local t
  t=$(now)
  # model_index.json is written last, so a cut-off write is never taken for a model.
  x "$LOG/make_model.log" "$(cap 900)" python3 "$ROOT/scripts/bench/make_random_checkpoint.py" --out "$MODEL" --overwrite
  local rc=$?
  say "random checkpoint in $MODEL: rc $rc in $(since "$t") s ($(tail -1 "$LOG/make_model.log"))"
  [ "$rc" -eq 0 ] || [ "$DRY" = 1 ] || { rm -rf "$MODEL"; return 1; }
}
drop_caches() {  # prints what the page cache holds for the next load: dropped or warm
  if [ "$DRY" != 1 ] && [ "${DROP_CACHES:-0}" = 1 ] && sync && { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null
  then echo dropped
  else echo warm; fi
}
# vgen_timing DIR WALL RC [CACHE]: the numbers of DIR/timing.json (or load.json) as a JSON object
vgen_timing() { python3 "$REC" vgen-timing "$1" "$2" "$3" "${4:-warm}"; }
# peer_result LOG WALL RC CACHE: the peer's JSON line with the wall time added
peer_result() { python3 "$REC" peer-result "$@"; }

suite_load() {
  enough 150 "load" || return
  ensure_model || { say "SKIPPED load: no checkpoint in $MODEL"; return; }
  local i=0 who t rc dir cache args
  for who in $LOAD_ORDER; do
    i=$((i + 1))
    enough 90 "load $who" || return
    cache=$(drop_caches)
    t=$(now)
    if [ "$who" = vgen ]; then
      dir=$WORK/load_${N}_$i
      rm -rf "$dir"
      args=(run --recipe recipes/1gpu-14b.yaml --set "model=$MODEL" --out "$dir" --load-only)
      x "$LOG/load_${N}_${i}_vgen.log" "$(cap 300)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
      rc=$?
      emit load vgen "vgen ${args[*]}" "$(vgen_timing "$dir" "$(since "$t")" "$rc" "$cache")"
    else
      peer_env || continue
      x "$LOG/load_${N}_${i}_peer.log" "$(cap 300)" "${PEER_ENV[@]}" python3 \
        "$ROOT/scripts/bench/peer/diffusers_load_bench.py" --model "$MODEL"
      rc=$?
      emit load diffusers "diffusers_load_bench.py --model $MODEL" \
        "$(peer_result "$LOG/load_${N}_${i}_peer.log" "$(since "$t")" "$rc" "$cache")"
    fi
    say "load $who ($cache page cache) rc $rc: $(tail -1 "$RESULTS" | grep -o '"load_seconds": [0-9.]*')"
  done
}

suite_e2e() {
  enough 200 "e2e" || return
  ensure_model || { say "SKIPPED e2e: no checkpoint in $MODEL"; return; }
  local prompt="a red fox running through fresh snow at dawn"
  printf '%s\n' "$prompt" > "$WORK/e2e_prompt.txt"
  local i=0 who t rc dir args
  for who in $E2E_ORDER; do
    i=$((i + 1))
    enough 150 "e2e $who" || return
    t=$(now)
    if [ "$who" = vgen ]; then
      dir=$WORK/e2e_${N}_$i
      rm -rf "$dir"
      args=(run --recipe recipes/1gpu-14b.yaml --set "model=$MODEL" --prompts "$WORK/e2e_prompt.txt" --out "$dir"
            --set generation.height=480 --set generation.width=832 --set generation.num_frames=81
            --set generation.num_inference_steps=4 --set generation.guidance_scale=5.0
            --set generation.flow_shift=null --set output.skip_existing=false)
      x "$LOG/e2e_${N}_${i}_vgen.log" "$(cap 400)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
      rc=$?
      emit e2e vgen "vgen ${args[*]}" "$(vgen_timing "$dir" "$(since "$t")" "$rc")"
      cp "$dir/timing.json" "$LOG/e2e_${N}_${i}_timing.json" 2>/dev/null
    else
      peer_env || continue
      args=(--model "$MODEL" --render --prompt "$prompt" --height 480 --width 832 --frames 81 --steps 4 --guidance 5)
      x "$LOG/e2e_${N}_${i}_peer.log" "$(cap 400)" "${PEER_ENV[@]}" python3 \
        "$ROOT/scripts/bench/peer/diffusers_load_bench.py" "${args[@]}"
      rc=$?
      emit e2e diffusers "diffusers_load_bench.py ${args[*]}" \
        "$(peer_result "$LOG/e2e_${N}_${i}_peer.log" "$(since "$t")" "$rc" warm)"
    fi
    say "e2e $who rc $rc: $(tail -1 "$RESULTS" | grep -o '"\(load\|render\|wall\)_seconds": [0-9.]*' | tr '\n' ' ')"
  done
}

suite_lora() {
  enough 300 "lora" || return
  ensure_model || { say "SKIPPED lora: no checkpoint in $MODEL"; return; }
  local lora=$WORK/random_lora_r${LORA_RANK}.safetensors t rc dir i=0 who args
  if [ ! -f "$lora" ]; then
    x "$LOG/make_lora.log" "$(cap 300)" python3 "$ROOT/scripts/bench/make_random_lora.py" --model "$MODEL" \
      --rank "$LORA_RANK" --out "$lora" || { say "SKIPPED lora: the random adapter was not written (make_lora.log)"; return; }
  fi
  # The merge's cost: --load-only without and with the adapter, ABBA.
  for who in plain lora lora plain; do
    i=$((i + 1))
    enough 60 "lora load $who" || return
    dir=$WORK/lora_load_${N}_$i
    rm -rf "$dir"
    args=(run --recipe recipes/1gpu-14b.yaml --set "model=$MODEL" --out "$dir" --load-only)
    [ "$who" = lora ] && args+=(--set "lora=[{path: $lora, scale: 1.0}]")
    t=$(now)
    x "$LOG/lora_load_${N}_${i}.log" "$(cap 200)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
    rc=$?
    emit lora "vgen-load-$who" "vgen ${args[*]}" "$(vgen_timing "$dir" "$(since "$t")" "$rc" warm)"
    say "lora load $who rc $rc: $(tail -1 "$RESULTS" | grep -o '"load_seconds": [0-9.]*')"
  done
  # The distilled schedule (4 steps, guidance 1, Euler shift 5, adapter merged) against the default
  # one (50 steps, guidance 5), each one video at $LORA_SHAPES x 81 frames. The default renders
  # $LORA_DEFAULT_STEPS steps only (a full 50 steps at 720p is ~1000 s of GPU time); its DiT time per
  # step is what the ratio needs, and the record says it is measured on fewer steps.
  local prompt="a red fox running through fresh snow at dawn" shape h w
  printf '%s\n' "$prompt" > "$WORK/lora_prompt.txt"
  for shape in ${LORA_SHAPES//,/ }; do
    case "$shape" in 480p) h=480; w=832 ;; 720p) h=720; w=1280 ;; *) say "lora: unknown shape $shape"; continue ;; esac
    for who in distill default; do
      enough 120 "lora render $who $shape" || return
      dir=$WORK/lora_render_${N}_${shape}_$who
      rm -rf "$dir"
      args=(run --recipe recipes/1gpu-14b.yaml --set "model=$MODEL" --prompts "$WORK/lora_prompt.txt" --out "$dir"
            --set generation.height=$h --set generation.width=$w --set generation.num_frames=81
            --set output.skip_existing=false)
      if [ "$who" = distill ]; then
        args+=(--set "lora=[{path: $lora, scale: 1.0}]" --set generation.num_inference_steps=4
               --set generation.guidance_scale=1.0 --set generation.scheduler=euler --set generation.flow_shift=5.0)
      else
        args+=(--set generation.num_inference_steps=$LORA_DEFAULT_STEPS --set generation.guidance_scale=5.0)
      fi
      t=$(now)
      x "$LOG/lora_render_${N}_${shape}_$who.log" "$(cap 400)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
      rc=$?
      local res
      res=$(vgen_timing "$dir" "$(since "$t")" "$rc" warm)
      if [ "$who" = default ]; then
        res=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); n=int(sys.argv[2]); d=r.get("denoise_seconds")
r.update(steps_run=n, guidance=5.0, denoise_seconds_per_step=(d/n if d else None),
         denoise_seconds_50_steps_from_per_step=(50*d/n if d else None)); print(json.dumps(r))' "$res" "$LORA_DEFAULT_STEPS")
      else
        res=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(steps_run=4, guidance=1.0); print(json.dumps(r))' "$res")
      fi
      emit lora "vgen-render-$who-$shape" "vgen ${args[*]}" "$res"
      say "lora render $who $shape rc $rc: $(tail -1 "$RESULTS" | grep -o '"denoise_seconds[a-z_0-9]*": [0-9.]*' | tr '\n' ' ')"
    done
  done
}
suite_scaling() {
  enough 120 "scaling" || return
  local d=$BUILD/scaling f n0=0 n1=0
  [ -f "$d/dit.jsonl" ] && n0=$(wc -l < "$d/dit.jsonl")
  [ -f "$d/vae.jsonl" ] && n1=$(wc -l < "$d/vae.jsonl")
  x "$LOG/scaling_$N.log" "$(cap 600)" env BUDGET_S="$(( $(left) - 15 ))" VGEN_GPU_BUILD="$BUILD" OUT= \
    bash "$ROOT/scripts/bench/run_scaling.sh" dit vae
  local rc=$?
  say "scaling rc $rc: $(grep -c '^\[scaling\] dit' "$LOG/scaling_$N.log") dit and $(grep -c '^\[scaling\] vae' "$LOG/scaling_$N.log") vae lines"
  for f in dit vae; do
    local skip=$n0
    [ "$f" = vae ] && skip=$n1
    [ -f "$d/$f.jsonl" ] || continue
    tail -n +$((skip + 1)) "$d/$f.jsonl" > "$WORK/scaling_${N}_$f.jsonl"
    emit scaling vgen "run_scaling.sh $f (SHAPES, LAYERS, REPS as set)" "@$WORK/scaling_${N}_$f.jsonl"
  done
}

# shellcheck source=scripts/bench/gpu_suite_i2v.sh
source "$ROOT/scripts/bench/gpu_suite_i2v.sh"  # dit_i2v vae22 peer_i2v ti2v i2v_batch
# shellcheck source=scripts/bench/gpu_suite_cosmos3.sh
source "$ROOT/scripts/bench/gpu_suite_cosmos3.sh"  # cosmos3 cosmos3_e2e

for s in "${SUITES[@]}"; do
  N=$((N + 1))
  "suite_$s"
done

# ---- the table of this call's records
python3 "$REC" table "$RESULTS" "$STAMP" | tee -a "$SUMMARY"
n=$(grep -c "\"invocation\": \"$STAMP\"" "$RESULTS" 2>/dev/null)
say "done in $(( $(date +%s) - T0 )) s; ${n:-0} record(s) in $RESULTS"
[ "$EMIT_FAILED" = 1 ] && FAILED=1
finish "$FAILED"
