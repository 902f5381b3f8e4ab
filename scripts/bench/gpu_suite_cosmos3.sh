# shellcheck shell=bash
# The Cosmos 3 suites of scripts/bench/gpu_suite.sh (sourced by it; its helpers x, emit, enough, cap,
# say, now, since, vgen_timing, peer_env, ensure_variant, raw_output_gone and its variables are used here).
#   cosmos3      the DiT time of one CFG step, vgen against the peer, on GPU 0, in the order
#                $COSMOS_ORDER (default "vgen peer"; "vgen peer peer vgen" for ABBA): vgen_cosmos3_bench
#                (the prefill of each prompt once, then the conditional and unconditional forwards of
#                the generation tower) and scripts/bench/peer/diffusers_cosmos3_bench.py dit (both
#                forwards, each recomputing the understanding tower), random bf16 weights of
#                $COSMOS_CONFIG (default the Nano copy, recipes/models/cosmos3-nano/transformer) cut to
#                $COSMOS_LAYERS layers (default 12, a third of Nano, so that both sides fit one
#                600-second call with the build; "all": the config's depth), at $COSMOS_SHAPES (720p =
#                720x1280x189, or HxWxF), prompts of $COSMOS_PROMPT_TOKENS (256) and $COSMOS_UNCOND_TOKENS
#                (64) ids, warm-up 1, median of $REPS; COSMOS_FP8 (all|gemm|attention) adds a vgen run in
#                precision fp8. The vgen record also gives the prefill's share of the DiT time of a
#                video of $COSMOS_STEPS (35) steps. Super: COSMOS_CONFIG=recipes/models/cosmos3-super/transformer
#                COSMOS_LAYERS=all COSMOS_ORDER=vgen on one H200 (needs_h200: ~125 GB of weights)
#   cosmos3_e2e  one video, each a fresh process that loads and renders, in the order $E2E_ORDER (default
#                "vgen peer"): `vgen run --recipe recipes/1gpu-cosmos3-nano-720p.yaml` (720x1280x189,
#                CFG 6, flow shift 10, $COSMOS_E2E_STEPS steps, default 35) against the peer's
#                Cosmos3OmniPipeline call (diffusers_cosmos3_bench.py pipeline, the same settings,
#                output_type "np"); on $COSMOS_MODEL (default <build>/random-cosmos3-nano-l$COSMOS_E2E_LAYERS,
#                made by make_random_checkpoint.py --variant cosmos3-nano --layers $COSMOS_E2E_LAYERS
#                when missing; default 12 layers: 13.2 GB; "all": 36, 31.8 GB). The records give load,
#                render, per-step and the first step's excess over the others (the two prefills run
#                inside vgen's first step) with its share of the render
# The suites time what the issue's targets name: the DiT per step (cosmos3: vgen/peer of `seconds`),
# the prefill's share of a video (cosmos3_e2e, and cosmos3's prefill_share_of_dit as an upper bound
# without the VAE), Super on one H200 (cosmos3 with the Super config).

COSMOS_CONFIG=${COSMOS_CONFIG:-recipes/models/cosmos3-nano/transformer}
COSMOS_LAYERS=${COSMOS_LAYERS:-12}
COSMOS_SHAPES=${COSMOS_SHAPES:-720p}
COSMOS_PROMPT_TOKENS=${COSMOS_PROMPT_TOKENS:-256}
COSMOS_UNCOND_TOKENS=${COSMOS_UNCOND_TOKENS:-64}
COSMOS_STEPS=${COSMOS_STEPS:-35}
COSMOS_ORDER=${COSMOS_ORDER:-vgen peer}
COSMOS_E2E_LAYERS=${COSMOS_E2E_LAYERS:-12}
COSMOS_E2E_STEPS=${COSMOS_E2E_STEPS:-35}
COSMOS_MODEL=${COSMOS_MODEL:-$BUILD/random-cosmos3-nano-l$COSMOS_E2E_LAYERS}
COSMOS_PROMPT="a red fox running through fresh snow at dawn"
COSMOS3=$BUILD/tests/vgen_cosmos3_bench

# cosmos3_run IMPL LABEL LOG CMD...: one side's measurement, its JSON lines recorded under IMPL
cosmos3_run() {
  local impl=$1 label=$2 log=$3 out=${3%.log}.jsonl rc
  shift 3
  rm -f "$out"
  x "$log" "$(cap 450)" env CUDA_VISIBLE_DEVICES=0 "$@"
  rc=$?
  grep '^{' "$log" > "$out" 2>/dev/null
  say "cosmos3 $impl rc $rc: $(grep -ho '"seconds": [0-9.]*\|"prefill_seconds": [0-9.e-]*\|"peak_mem_gib": [0-9.]*' \
    "$out" | tr '\n' ' ')"
  [ "$rc" -eq 0 ] || tail -3 "$log"
  emit cosmos3 "$impl" "$label" "@$out"
}

suite_cosmos3() {
  local layers=() common who i=0 fp8=() cfg=$COSMOS_CONFIG
  [[ $cfg = /* ]] || cfg=$ROOT/$cfg
  [ "$COSMOS_LAYERS" = all ] || layers=(--layers "$COSMOS_LAYERS")
  common=(--config "$cfg" "${layers[@]}" --shapes "$COSMOS_SHAPES" --prompt-tokens "$COSMOS_PROMPT_TOKENS"
          --uncond-tokens "$COSMOS_UNCOND_TOKENS" --reps "$REPS" --warmup 1)
  for who in $COSMOS_ORDER ${COSMOS_FP8:+vgen_fp8}; do
    i=$((i + 1))
    enough 150 "cosmos3 $who" || return
    case $who in
      vgen|vgen_fp8)
        fp8=()
        [ "$who" = vgen_fp8 ] && fp8=(--fp8 "$COSMOS_FP8")
        cosmos3_run vgen "vgen_cosmos3_bench ${common[*]#"$ROOT"/} --steps $COSMOS_STEPS ${fp8[*]}" \
          "$LOG/cosmos3_${N}_${i}_$who.log" "$COSMOS3" "${common[@]}" --steps "$COSMOS_STEPS" "${fp8[@]}" ;;
      peer)
        peer_env || continue
        cosmos3_run diffusers "diffusers_cosmos3_bench.py dit ${common[*]#"$ROOT"/}" "$LOG/cosmos3_${N}_${i}_peer.log" \
          PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 python3 \
          "$ROOT/scripts/bench/peer/diffusers_cosmos3_bench.py" dit "${common[@]}" ;;
      *) say "cosmos3: unknown name '$who' in COSMOS_ORDER (vgen, peer)" ;;
    esac
  done
}

suite_cosmos3_e2e() {
  enough 300 "cosmos3_e2e" || return
  local cut=(--layers "$COSMOS_E2E_LAYERS")
  [ "$COSMOS_E2E_LAYERS" = all ] && cut=()
  ensure_variant "$COSMOS_MODEL" cosmos3-nano "$COSMOS_E2E_LAYERS layers" "${cut[@]}" ||
    { say "SKIPPED cosmos3_e2e: no checkpoint in $COSMOS_MODEL"; return; }
  printf '%s\n' "$COSMOS_PROMPT" > "$WORK/cosmos3_prompt.txt"
  local i=0 who t rc dir args
  for who in $E2E_ORDER; do
    i=$((i + 1))
    enough 200 "cosmos3_e2e $who" || return
    t=$(now)
    if [ "$who" = vgen ]; then
      dir=$WORK/cosmos3_e2e_${N}_$i
      rm -rf "$dir"
      args=(run --recipe recipes/1gpu-cosmos3-nano-720p.yaml --set "model=$COSMOS_MODEL" --prompts "$WORK/cosmos3_prompt.txt"
            --out "$dir" --set generation.num_inference_steps="$COSMOS_E2E_STEPS" --set output.skip_existing=false)
      x "$LOG/cosmos3_e2e_${N}_${i}_vgen.log" "$(cap 550)" env CUDA_VISIBLE_DEVICES=0 "$VGEN" "${args[@]}"
      rc=$?
      emit cosmos3_e2e vgen "vgen ${args[*]}" "$(python3 "$REC" cosmos3-timing "$dir" "$(since "$t")" "$rc")"
      cp "$dir/timing.json" "$LOG/cosmos3_e2e_${N}_${i}_timing.json" 2>/dev/null
      raw_output_gone "$dir"
    else
      peer_env || continue
      args=(pipeline --model "$COSMOS_MODEL" --prompt "$COSMOS_PROMPT" --height 720 --width 1280 --frames 189
            --steps "$COSMOS_E2E_STEPS" --guidance 6 --flow-shift 10)
      x "$LOG/cosmos3_e2e_${N}_${i}_peer.log" "$(cap 550)" "${PEER_ENV[@]}" python3 \
        "$ROOT/scripts/bench/peer/diffusers_cosmos3_bench.py" "${args[@]}"
      rc=$?
      emit cosmos3_e2e diffusers "diffusers_cosmos3_bench.py ${args[*]}" \
        "$(peer_result "$LOG/cosmos3_e2e_${N}_${i}_peer.log" "$(since "$t")" "$rc" warm)"
    fi
    [ "$rc" -eq 0 ] || tail -3 "$LOG/cosmos3_e2e_${N}_${i}_$who.log"
    say "cosmos3_e2e $who rc $rc: $(tail -1 "$RESULTS" | grep -o '"\(load\|render\|step\)_seconds": [0-9.]*' | tr '\n' ' ')"
  done
}
