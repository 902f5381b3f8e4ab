# shellcheck shell=bash
# The image-to-video suites of scripts/bench/gpu_suite.sh (sourced by it; its helpers x, emit,
# enough, cap, say, now, since, vgen_timing, peer_result, peer_env and its variables are used here).
#   dit_i2v     vgen_dit_bench --config $I2V_DIT_CONFIG: the I2V-14B DiT forward (in_channels 36, 257
#               CLIP tokens through the image path, text 512) at $SHAPES, $LAYERS layers, random bf16
#               weights, warm-up 1, median of $REPS, on GPU 0; DIT_FP8 (and DIT_FP8_QK, DIT_FP8_GEMM)
#               as for dit
#   vae22       vgen_vae_bench --config recipes/models/wan2.2-ti2v-5b/vae: the Wan 2.2 VAE decode at
#               $VAE22_SHAPES (default 704x1280x121) in bf16 with its peak memory, on GPU 0 ($VAE22_EXTRA:
#               more vgen_vae_bench flags, e.g. --autotune)
#   peer_i2v    scripts/bench/peer/diffusers_i2v_bench.py on GPU 0, the same shapes and timing: dit when
#               this call runs dit_i2v, vae22 when it runs vae22, both when it runs neither
#               ($PEER_I2V_WHAT overrides: "dit", "vae22" or "dit vae22"); always bf16
#   ti2v        one TI2V-5B video 704x1280x121 with an image, 4 steps, guidance 5, on GPU 0, each a
#               fresh process that loads and renders, in the order $E2E_ORDER: `vgen run --recipe
#               recipes/1gpu-ti2v-5b.yaml` on a one-line JSONL against the peer's
#               WanImageToVideoPipeline (output_type "np"); on $TI2V_MODEL (default
#               <build>/random-wan22-ti2v-5b, made by make_random_checkpoint.py --variant ti2v-5b
#               when missing: 22.8 GB) and $TI2V_IMAGE (default: a 1280x704 PNG made here)
#   i2v_batch   one `vgen run --recipe $I2V_RECIPE` (default recipes/1gpu-i2v-480p.yaml) of
#               $I2V_LINES (8) JSONL lines, each its own 832x480 image and prompt, $I2V_STEPS (4)
#               steps, on GPU 0: each video's seconds from timing.json (text, CLIP image, VAE encode,
#               denoise, decode) and the first against the median of the rest; on $I2V_MODEL
#               (default <build>/random-wan21-i2v-14b-l$I2V_LAYERS: --variant i2v-14b with
#               $I2V_LAYERS (10) DiT layers, full text encoder, CLIP and VAE: 21.4 GB)
# Without FFmpeg (the GPU build) vgen writes each video as raw RGB frames (<stem>.rgb + .json): that
# write is its mp4_encode seconds, reported apart (render_seconds_without_output); they are deleted
# after each run. The peer writes nothing.

I2V_DIT_CONFIG=${I2V_DIT_CONFIG:-recipes/models/wan2.1-i2v-14b-720p/transformer}
VAE22_CONFIG=${VAE22_CONFIG:-recipes/models/wan2.2-ti2v-5b/vae}
VAE22_SHAPES=${VAE22_SHAPES:-704x1280x121}
VAE22_EXTRA=${VAE22_EXTRA:-}  # more vgen_vae_bench flags (e.g. --autotune)
TI2V_MODEL=${TI2V_MODEL:-$BUILD/random-wan22-ti2v-5b}
TI2V_IMAGE=${TI2V_IMAGE:-}
I2V_LAYERS=${I2V_LAYERS:-10}
I2V_MODEL=${I2V_MODEL:-$BUILD/random-wan21-i2v-14b-l$I2V_LAYERS}
I2V_RECIPE=${I2V_RECIPE:-recipes/1gpu-i2v-480p.yaml}
I2V_LINES=${I2V_LINES:-8}
I2V_STEPS=${I2V_STEPS:-4}
I2V_PROMPT="a red fox running through fresh snow at dawn"

# images_ok WHAT: whether this build decodes images (VGEN_IMAGES; gpu_check.sh turns it off where
# the libpng / libjpeg headers are missing), else says WHAT is skipped
images_ok() {
  [ "$DRY" = 1 ] && return 0
  if grep -q '^VGEN_IMAGES:BOOL=OFF' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    say "SKIPPED $1: this build reads no images (VGEN_IMAGES=OFF: libpng/libjpeg headers missing here)"
    return 1
  fi
}

suite_dit_i2v() {
  enough 150 "dit_i2v" || return
  local out=$WORK/dit_i2v_$N.jsonl
  rm -f "$out"
  local args=(--config "$ROOT/$I2V_DIT_CONFIG" --shapes "$SHAPES" --layers "$LAYERS" --reps "$REPS" --warmup 1
              --no-profile --tag "dit_i2v_$N")
  [ -n "${DIT_FP8:-}" ] && args+=(--fp8 "$DIT_FP8")
  [ -n "${DIT_FP8:-}" ] && [ -n "${DIT_FP8_QK:-}" ] && args+=(--fp8-qk "$DIT_FP8_QK")
  [ -n "${DIT_FP8:-}" ] && [ -n "${DIT_FP8_GEMM:-}" ] && args+=(--fp8-gemm "$DIT_FP8_GEMM")
  x "$LOG/dit_i2v_$N.log" "$(cap 450)" env CUDA_VISIBLE_DEVICES=0 "$DIT" "${args[@]}" --out "$out"
  local rc=$?
  say "dit_i2v rc $rc: $(grep -h '^#.*tokens' "$LOG/dit_i2v_$N.log" | tr '\n' ' ')"
  [ "$rc" -eq 0 ] || tail -3 "$LOG/dit_i2v_$N.log"
  emit dit_i2v vgen "vgen_dit_bench ${args[*]#"$ROOT"/}" "@$out"
}

suite_vae22() {
  enough 120 "vae22" || return
  local out=$WORK/vae22_$N.jsonl
  rm -f "$out"
  local args=(--config "$ROOT/$VAE22_CONFIG" --shapes "$VAE22_SHAPES" --dtype bf16 --reps "$REPS" --tag "vae22_$N")
  [ -n "$VAE22_EXTRA" ] && read -ra extra <<< "$VAE22_EXTRA" && args+=("${extra[@]}")
  x "$LOG/vae22_$N.log" "$(cap 300)" env CUDA_VISIBLE_DEVICES=0 "$VAE" "${args[@]}" --out "$out"
  local rc=$?
  say "vae22 rc $rc: $(grep -h '^# vae' "$LOG/vae22_$N.log" | tr '\n' ' ')"
  [ "$rc" -eq 0 ] || tail -3 "$LOG/vae22_$N.log"
  emit vae22 vgen "vgen_vae_bench ${args[*]#"$ROOT"/}" "@$out"
}

suite_peer_i2v() {
  enough 150 "peer_i2v" || return
  peer_env || return
  local what=${PEER_I2V_WHAT:-}
  if [ -z "$what" ]; then
    has_suite dit_i2v && what+=" dit"
    has_suite vae22 && what+=" vae22"
    [ -n "$what" ] || what="dit vae22"
  fi
  local w args out log rc
  for w in $what; do
    enough 120 "peer_i2v $w" || return
    case $w in
      dit) args=(dit --config "$ROOT/$I2V_DIT_CONFIG" --shapes "$SHAPES" --layers "$LAYERS" --reps "$REPS"
                 --warmup 1) ;;
      vae22) args=(vae22 --config "$ROOT/$VAE22_CONFIG" --shapes "$VAE22_SHAPES" --reps "$REPS" --warmup 1) ;;
      *) say "peer_i2v: unknown '$w' in PEER_I2V_WHAT (dit, vae22)"; continue ;;
    esac
    log=$LOG/peer_i2v_${N}_$w.log
    out=$WORK/peer_i2v_${N}_$w.jsonl
    x "$log" "$(cap 450)" "${PEER_ENV[@]}" python3 "$ROOT/scripts/bench/peer/diffusers_i2v_bench.py" "${args[@]}"
    rc=$?
    grep '^{' "$log" > "$out" 2>/dev/null
    say "peer_i2v $w rc $rc: $(grep -ho '"height": [0-9]*\|"seconds": [0-9.]*\|"peak_mem_gib": [0-9.]*' "$out" |
      tr '\n' ' ')"
    [ "$rc" -eq 0 ] || tail -3 "$log"
    emit peer_i2v diffusers "diffusers_i2v_bench.py ${args[*]#"$ROOT"/}" "@$out"
  done
}

# ensure_variant DIR VARIANT WHAT [ARGS...]: a random checkpoint of VARIANT in DIR (written when missing)
ensure_variant() {
  local dir=$1 variant=$2 what=$3
  shift 3
  [ -f "$dir/model_index.json" ] && return 0
  enough 300 "the random $variant checkpoint" || return 1
  local t rc
  t=$(now)
  # model_index.json is written last, so a cut-off write is never taken for a model.
  x "$LOG/make_model_$variant.log" "$(cap 900)" python3 "$ROOT/scripts/bench/make_random_checkpoint.py" \
    --variant "$variant" "$@" --out "$dir" --overwrite
  rc=$?
  say "random $variant checkpoint ($what) in $dir: rc $rc in $(since "$t") s" \
    "($(tail -1 "$LOG/make_model_$variant.log"))"
  [ "$rc" -eq 0 ] || [ "$DRY" = 1 ] || { rm -rf "$dir"; return 1; }
}

# raw_output_gone DIR: removes a run's raw video frames (hundreds of MB each), keeps timing.json
raw_output_gone() { [ "$DRY" = 1 ] || find "$1" -name '*.rgb' -delete 2>/dev/null; }

suite_ti2v() {
  enough 240 "ti2v" || return
  images_ok ti2v || return
  ensure_variant "$TI2V_MODEL" ti2v-5b "full size" || { say "SKIPPED ti2v: no checkpoint in $TI2V_MODEL"; return; }
  local in=$WORK/ti2v_in img
  if [ -n "$TI2V_IMAGE" ]; then  # a given image: a one-line JSONL beside a copy of it
    mkdir -p "$in"
    cp "$TI2V_IMAGE" "$in/image_0.png"
    printf '{"prompt": "%s", "image": "image_0.png"}\n' "$I2V_PROMPT" > "$in/prompts.jsonl"
  else
    x "$LOG/ti2v_images.log" 60 python3 "$ROOT/scripts/bench/make_bench_images.py" --out "$in" --count 1 \
      --width 1280 --height 704 --prompt "$I2V_PROMPT"
  fi
  img=$in/image_0.png
  local i=0 who t rc dir args
  for who in $E2E_ORDER; do
    i=$((i + 1))
    enough 180 "ti2v $who" || return
    t=$(now)
    if [ "$who" = vgen ]; then
      dir=$WORK/ti2v_${N}_$i
      rm -rf "$dir"
      args=(run --recipe recipes/1gpu-ti2v-5b.yaml --set "model=$TI2V_MODEL" --prompts "$in/prompts.jsonl" --out "$dir"
            --set generation.height=704 --set generation.width=1280 --set generation.num_frames=121
            --set generation.num_inference_steps=4 --set generation.guidance_scale=5.0
            --set generation.flow_shift=null --set output.skip_existing=false)
      x "$LOG/ti2v_${N}_${i}_vgen.log" "$(cap 500)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
      rc=$?
      emit ti2v vgen "vgen ${args[*]}" "$(vgen_timing "$dir" "$(since "$t")" "$rc")"
      cp "$dir/timing.json" "$LOG/ti2v_${N}_${i}_timing.json" 2>/dev/null
      raw_output_gone "$dir"
    else
      peer_env || continue
      args=(ti2v --model "$TI2V_MODEL" --image "$img" --prompt "$I2V_PROMPT" --height 704 --width 1280 --frames 121
            --steps 4 --guidance 5)
      x "$LOG/ti2v_${N}_${i}_peer.log" "$(cap 500)" "${PEER_ENV[@]}" python3 \
        "$ROOT/scripts/bench/peer/diffusers_i2v_bench.py" "${args[@]}"
      rc=$?
      emit ti2v diffusers "diffusers_i2v_bench.py ${args[*]}" \
        "$(peer_result "$LOG/ti2v_${N}_${i}_peer.log" "$(since "$t")" "$rc" warm)"
    fi
    [ "$rc" -eq 0 ] || tail -3 "$LOG/ti2v_${N}_${i}_$who.log"
    say "ti2v $who rc $rc: $(tail -1 "$RESULTS" | grep -o '"\(load\|render\|wall\)_seconds": [0-9.]*' | tr '\n' ' ')"
  done
}

suite_i2v_batch() {
  enough 240 "i2v_batch" || return
  images_ok i2v_batch || return
  ensure_variant "$I2V_MODEL" i2v-14b "$I2V_LAYERS DiT layers" --layers "$I2V_LAYERS" ||
    { say "SKIPPED i2v_batch: no checkpoint in $I2V_MODEL"; return; }
  local in=$WORK/i2v_batch_in
  x "$LOG/i2v_batch_images.log" 60 python3 "$ROOT/scripts/bench/make_bench_images.py" --out "$in" \
    --count "$I2V_LINES" --width 832 --height 480
  local dir=$WORK/i2v_batch_$N t rc
  rm -rf "$dir"
  local args=(run --recipe "$I2V_RECIPE" --set "model=$I2V_MODEL" --prompts "$in/prompts.jsonl" --out "$dir"
              --set generation.num_inference_steps="$I2V_STEPS" --set output.skip_existing=false)
  t=$(now)
  x "$LOG/i2v_batch_$N.log" "$(cap 900)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
  rc=$?
  local res=$WORK/i2v_batch_$N.jsonl
  python3 "$REC" vgen-videos "$dir" "$(since "$t")" "$rc" > "$res"
  emit i2v_batch vgen "vgen ${args[*]} (random i2v-14b, $I2V_LAYERS layers)" "@$res"
  cp "$dir/timing.json" "$LOG/i2v_batch_${N}_timing.json" 2>/dev/null
  raw_output_gone "$dir"
  [ "$rc" -eq 0 ] || tail -3 "$LOG/i2v_batch_$N.log"
  say "i2v_batch rc $rc: $(grep -o '"\(first_seconds\|rest_median_seconds\|rest_over_first\)": [0-9.]*' "$res" |
    tr '\n' ' ')"
}
