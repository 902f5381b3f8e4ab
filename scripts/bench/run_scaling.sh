#!/usr/bin/env bash
# Multi-GPU scaling of vgen on one host (issue 9), from the repository root, in as many calls as the
# budget needs (each call runs the stages it is given while BUDGET_S lasts; the
# measurements accumulate in <build>/scaling and every call hands them all back in $OUT):
#   build   configure + build (CUDA, no FFmpeg) of vgen, vgen_dit_bench, vgen_vae_bench
#   dit     one CFG step (both text streams) of the Wan2.1-14B DiT, random bf16 weights, per mesh of
#           this GPU count and on one GPU (the baseline), SHAPES each (vgen_dit_bench --cfg-step)
#   vae     Wan 2.1 VAE decode at 720p with the parallel VAE over 1, 2, 4, ... ranks (vgen_vae_bench)
#   golden  vgen golden in bf16 on each mesh (the fixtures have 2 heads: meshes with more than 2
#           Ulysses ranks cannot run them and are reported as such)
#   e2e     vgen run end to end: 720×1280×81, 40 steps, one prompt, on all GPUs, with the model in
#           $MODEL (made by scripts/bench/make_random_checkpoint.py when MAKE_MODEL=1), timing.json
#   plot    speedup of each mesh over one GPU against the GPU count (scripts/bench/plot_scaling.py)
# Meshes (vgen_dit_bench --mode; the lists of issue 9): 8 GPUs cfg2-ulysses4 cfg2-ulysses2-attn2d1x2
# cfg2-attn2d2x2 cfg2-ring4 ulysses8; 4 GPUs cfg2-ulysses2 ulysses4 cfg2-attn2d1x2 cfg2-ring2;
# 2 GPUs (a dry run of the same script) cfg2 ulysses2 attn2d1x2 ring2.
#
# Carry: .dev/deps. Usage: scripts/bench/run_scaling.sh [stages...]   (default: all)
# Environment: VGEN_GPU_BUILD (default build-gpu), SHAPES (default 720p,480p), LAYERS (default 40),
#   REPS (default 3), MESHES (override the list), VAE_RANKS (default 1 2 4 8 up to the GPU count),
#   BUDGET_S (default 570), MODEL / MAKE_MODEL / E2E_SETS (e2e: extra --set arguments, default the
#   recipes/8gpu-14b.yaml mesh scaled to the GPU count), VGEN_COMMIT.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
DIR=$BUILD/scaling
SHAPES=${SHAPES:-720p,480p}
LAYERS=${LAYERS:-40}
REPS=${REPS:-3}
BUDGET_S=${BUDGET_S:-570}
STAGES=${*:-all}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d "$ROOT/.dev/deps/openblas/lib" ] && export LD_LIBRARY_PATH=$ROOT/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VGEN_COMMIT=${VGEN_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
mkdir -p "$DIR/logs"
T0=$(date +%s)
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
SUMMARY=$DIR/summary.txt
say() { echo "[scaling] $*" | tee -a "$SUMMARY"; }
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
want() { [[ " $STAGES " == *" all "* || " $STAGES " == *" $1 "* ]]; }
enough() {
  if [ "$(left)" -lt "$1" ]; then say "SKIPPED $2: $(left) s of the budget left, needs ~$1 s"; return 1; fi
}
finish() {
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$SUMMARY" "$OUT/summary.txt"
    for f in dit.jsonl vae.jsonl scaling.svg timing.json; do [ -s "$DIR/$f" ] && cp "$DIR/$f" "$OUT/"; done
    tar czf "$OUT/scaling_logs.tgz" -C "$DIR/logs" . 2>/dev/null
  fi
  exit "$1"
}
# The recipe --set arguments of a mesh's factors, one per line (cfg2-ulysses2-attn2d1x2: cfg_size 2,
# ulysses_size 2, attn2d_size [1,2]; a bare name means 2, attn2d 1x2). One per line so vgen golden
# gets them through mapfile, without word splitting or globbing of "[1,2]".
mesh_sets() {
  local f n rc
  for f in ${1//-/ }; do
    n=${f##*[a-z]}; n=${n:-2}
    case $f in
      cfg*) printf '%s\n' --set "parallel_config.cfg_size=$n" ;;
      ulysses*) printf '%s\n' --set "parallel_config.ulysses_size=$n" ;;
      ring*) printf '%s\n' --set "parallel_config.ring_size=$n" ;;
      attn2d*) rc=${f#attn2d}; rc=${rc:-1x2}; printf '%s\n' --set "parallel_config.attn2d_size=[${rc%x*},${rc#*x}]" ;;
    esac
  done
}
# The ranks of a mesh: the product of its sizes (cfg2-ulysses2-attn2d1x2 -> 8).
ranks_of() {
  local n=1 a rc
  while read -r a; do
    case $a in
      parallel_config.attn2d_size=*) rc=${a#*[}; rc=${rc%]}; n=$(( n * ${rc%,*} * ${rc#*,} )) ;;
      parallel_config.*) n=$(( n * ${a#*=} )) ;;
    esac
  done < <(mesh_sets "$1")
  echo $n
}
# mesh_sets plus the parallel VAE over the cfg-0 group (docs/architecture.md), here all its ranks.
sets_of() {
  local cfg
  cfg=$(mesh_sets "$1" | sed -n 's/^parallel_config.cfg_size=//p')
  mesh_sets "$1"
  printf '%s\n' --set "parallel_config.parallel_vae_size=$(( $(ranks_of "$1") / ${cfg:-1} ))"
}
# The height of a --shapes entry (720p, 480p or HxWxF).
height_of() { case $1 in 720p) echo 720 ;; 480p) echo 480 ;; *) echo "${1%%x*}" ;; esac; }
# Whether an earlier call measured MESH at SHAPE with LAYERS (vgen's JSON: sorted keys, no spaces).
measured() { grep -q "\"height\":$(height_of "$2"),.*\"layers\":$LAYERS,.*\"mode\":\"$1\",.*\"tag\":\"scaling\"" "$DIR/dit.jsonl" 2>/dev/null; }
case $NGPU in
  8) DEF_MESHES="cfg2-ulysses4 cfg2-ulysses2-attn2d1x2 cfg2-attn2d2x2 cfg2-ring4 ulysses8" ;;
  4) DEF_MESHES="cfg2-ulysses2 ulysses4 cfg2-attn2d1x2 cfg2-ring2" ;;
  2) DEF_MESHES="cfg2 ulysses2 attn2d1x2 ring2" ;;
  *) DEF_MESHES="" ;;
esac
MESHES=${MESHES:-$DEF_MESHES}
say "call at $(date -u +%FT%TZ): $NGPU GPU(s) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $VGEN_COMMIT, stages: $STAGES"

if want build; then
  if ! VGEN_GPU_BUILD=$BUILD OUT=$DIR/logs "$ROOT/scripts/device/gpu_check.sh" --configure-only > "$DIR/logs/configure.log" 2>&1; then
    tail -20 "$DIR/logs/configure.log"; say "configure failed (configure.log)"; finish 3
  fi
  if ! timeout $(( $(left) - 10 )) cmake --build "$BUILD" -j "$(nproc)" --target vgen vgen_dit_bench vgen_vae_bench \
       > "$DIR/logs/build.log" 2>&1; then
    grep -E "error" "$DIR/logs/build.log" | head -20; say "build failed (build.log)"; finish 3
  fi
  say "build done at $(( $(date +%s) - T0 )) s"
fi
DIT=$(find "$BUILD" -name vgen_dit_bench -type f | head -1)
VAE=$(find "$BUILD" -name vgen_vae_bench -type f | head -1)

if want dit; then
  for mesh in single $MESHES; do
    np=1; [ "$mesh" != single ] && np=$(ranks_of "$mesh")
    if [ "$np" -gt "$NGPU" ]; then say "SKIPPED dit $mesh: needs $np GPUs"; continue; fi
    todo=""
    for sh in ${SHAPES//,/ }; do measured "$mesh" "$sh" || todo+="${todo:+,}$sh"; done
    if [ -z "$todo" ]; then say "dit $mesh: measured in an earlier call"; continue; fi
    need=90; [ "$mesh" = single ] && need=200  # one GPU: two 10 s forwards per measurement at 720p
    enough $need "dit $mesh" || continue
    cmd=("$DIT" --mode "$mesh" --cfg-step --shapes "$todo" --layers "$LAYERS" --reps "$REPS" --warmup 1 --no-profile
         --out "$DIR/dit.jsonl" --tag scaling)
    [ "$np" -gt 1 ] && cmd=(mpirun -np "$np" --bind-to none "${cmd[@]}")
    timeout $(( $(left) - 10 )) "${cmd[@]}" > "$DIR/logs/dit_$mesh.log" 2>&1
    say "dit $mesh ($np GPUs) rc $?: $(grep '^#.*tokens' "$DIR/logs/dit_$mesh.log" | tr '\n' ' ')"
  done
fi

if want vae; then
  for n in ${VAE_RANKS:-1 2 4 8}; do
    [ "$n" -gt "$NGPU" ] && break
    if grep -q "\"parallel_vae_size\":$n,.*\"tag\":\"scaling\"" "$DIR/vae.jsonl" 2>/dev/null; then say "vae $n: measured in an earlier call"; continue; fi
    enough 60 "vae decode on $n ranks" || break
    cmd=("$VAE" --shapes 720p --reps "$REPS" --out "$DIR/vae.jsonl" --tag scaling)
    [ "$n" -gt 1 ] && cmd=(mpirun -np "$n" --bind-to none "${cmd[@]}")
    timeout $(( $(left) - 10 )) "${cmd[@]}" > "$DIR/logs/vae_$n.log" 2>&1
    say "vae 720p on $n rank(s) rc $?: $(grep -o '"seconds":[0-9.]*' "$DIR/logs/vae_$n.log" | head -1)"
  done
fi

if want golden; then
  for mesh in $MESHES; do
    np=$(ranks_of "$mesh"); [ "$np" -gt "$NGPU" ] && continue
    enough 40 "golden $mesh" || break
    mapfile -t sets < <(sets_of "$mesh")
    t=$(( $(left) - 10 )); [ "$t" -gt 120 ] && t=120
    timeout $t mpirun -np "$np" --bind-to none "$BUILD/bin/vgen" golden --fixtures "$ROOT/tests/golden" \
      --set device=cuda --set precision=bf16 "${sets[@]}" > "$DIR/logs/golden_$mesh.log" 2>&1
    rc=$?
    why=$(grep -o "does not divide the number of attention heads [0-9]*" "$DIR/logs/golden_$mesh.log" | head -1)
    say "golden bf16 $mesh (${sets[*]}) rc $rc: $(tail -1 "$DIR/logs/golden_$mesh.log")${why:+ (cases needing Ulysses: Ulysses size $why in the fixture)}"
  done
fi

if want e2e && [ "$NGPU" -ge 2 ]; then
  MODEL=${MODEL:-$BUILD/random-wan21-14b}
  if [ ! -f "$MODEL/model_index.json" ] && [ "${MAKE_MODEL:-0}" = 1 ] && enough 300 "random checkpoint"; then
    # model_index.json is written last, so a cut-off write is never taken for a model.
    timeout $(( $(left) - 10 )) python3 "$ROOT/scripts/bench/make_random_checkpoint.py" --out "$MODEL" --overwrite \
      > "$DIR/logs/make_model.log" 2>&1
    rc=$?
    say "random checkpoint rc $rc: $(du -sh "$MODEL" 2>/dev/null | cut -f1) ($(tail -1 "$DIR/logs/make_model.log"))"
    [ "$rc" -ne 0 ] && rm -rf "$MODEL"
  fi
  if [ ! -f "$MODEL/model_index.json" ]; then
    say "SKIPPED e2e: no model in $MODEL (MAKE_MODEL=1 makes a random one)"
  elif enough $(( 40 * 21 / NGPU + 150 )) "e2e"; then  # ~20.5 s per CFG step on one GPU, + load and decode
    u=$(( NGPU / 2 ))
    sets=${E2E_SETS:-"--set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=$u --set parallel_config.parallel_vae_size=$u"}
    printf 'a red fox running through fresh snow at dawn\n' > "$DIR/e2e_prompt.txt"
    rm -rf "$DIR/e2e_out"
    # shellcheck disable=SC2086
    timeout $(( $(left) - 10 )) mpirun -np "$NGPU" --bind-to none "$BUILD/bin/vgen" --recipe recipes/8gpu-14b.yaml \
      --set model="$MODEL" --set prompts="$DIR/e2e_prompt.txt" --set output.dir="$DIR/e2e_out" \
      --set output.skip_existing=false $sets > "$DIR/logs/e2e.log" 2>&1
    say "e2e rc $? ($NGPU GPUs, $sets): $(tail -2 "$DIR/logs/e2e.log" | tr '\n' ' ')"
    [ -f "$DIR/e2e_out/timing.json" ] && cp "$DIR/e2e_out/timing.json" "$DIR/timing.json"
  fi
fi

if want plot && [ -s "$DIR/dit.jsonl" ]; then
  python3 "$ROOT/scripts/bench/plot_scaling.py" "$DIR/dit.jsonl" "$DIR/vae.jsonl" "$DIR/scaling.svg" 2>&1 | tee -a "$SUMMARY"
fi
say "call done in $(( $(date +%s) - T0 )) s"
finish 0
