#!/usr/bin/env bash
# `vgen plan` as a user meets it: a recipe whose model is not here names the config-only copy to
# plan with; --predict prices on the recipe's `hardware` profile and says so; without --hardware, a
# `hardware` key or a GPU it stops with exit 2 listing the profiles; --rank rows are distinct meshes;
# every config-only copy plans, and so does every shipped image-to-video recipe on its copy; the
# Cosmos 3 recipes price on theirs, and Cosmos3-Super streams its understanding tower on an H100.
# Usage: plan_cli.sh CASE VGEN SOURCE_DIR
set -uo pipefail
CASE=$1; VGEN=$2; SRC=$3
cd "$SRC" || exit 1
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
fail() { echo "FAIL ($CASE): $*"; cat "$OUT"; exit 1; }
expect_rc() { [ "$1" -eq "$2" ] || fail "exit $1, expected $2"; }
expect_text() { grep -qF -- "$1" "$OUT" || fail "missing: $1"; }
COPY=(--no-weights --set model=recipes/models/wan2.1-t2v-14b)
case "$CASE" in
  models_hint)
    "$VGEN" plan --recipe recipes/nvl72-14b.yaml --world 72 >"$OUT" 2>&1; expect_rc $? 4
    expect_text "/models/Wan2.1-T2V-14B-Diffusers does not exist here"
    expect_text "--no-weights --set model=recipes/models/wan2.1-t2v-14b"
    "$VGEN" plan --recipe recipes/nvl72-14b.yaml --world 72 "${COPY[@]}" >"$OUT" 2>&1; expect_rc $? 0
    for m in Wan2.1-I2V-14B-480P Wan2.1-I2V-14B-720P Wan2.1-FLF2V-14B-720P Wan2.2-I2V-A14B Wan2.2-TI2V-5B; do
      "$VGEN" plan --recipe recipes/1gpu-14b.yaml --world 1 --set "model=/models/$m-Diffusers" >"$OUT" 2>&1
      expect_rc $? 4
      expect_text "--no-weights --set model=recipes/models/${m,,}"
    done ;;
  config_only_models)
    # Every config-only copy plans (the image-to-video ones with their conditioning).
    for d in recipes/models/*/; do
      d=${d%/}
      h=720; case "$d" in */wan2.2-ti2v-*) h=704 ;; esac  # TI2V-5B: multiples of 32 (VAE 16 × patch 2)
      "$VGEN" plan --recipe recipes/1gpu-14b.yaml --world 1 --no-weights --set "model=$d" \
        --set generation.height=$h >"$OUT" 2>&1
      expect_rc $? 0
      expect_text "model: $SRC/$d ("
      case "$d" in
        */wan2.?-t2v-*) ! grep -q "^conditioning:" "$OUT" || fail "$d: a text-to-video copy with a conditioning line" ;;
        *) expect_text "conditioning: a first frame" ;;
      esac
    done ;;
  i2v_recipes)
    # The shipped image-to-video recipes plan on their checkpoints' config-only copies.
    for r in 1gpu-i2v-480p:wan2.1-i2v-14b-480p:1 1gpu-i2v-720p:wan2.1-i2v-14b-720p:1 8gpu-i2v-720p:wan2.1-i2v-14b-720p:8 \
             1gpu-flf2v-720p:wan2.1-flf2v-14b-720p:1 8gpu-i2v-a14b:wan2.2-i2v-a14b:8 1gpu-ti2v-5b:wan2.2-ti2v-5b:1 \
             8gpu-ti2v-5b:wan2.2-ti2v-5b:8; do
      IFS=: read -r f m n <<< "$r"
      "$VGEN" plan --recipe "recipes/$f.yaml" --world "$n" --no-weights --set "model=recipes/models/$m" >"$OUT" 2>&1
      expect_rc $? 0
      expect_text "conditioning: a first frame"
    done ;;
  cosmos3_recipes)
    # The shipped Cosmos 3 recipes name their config-only copy and plan and price on it.
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 1 >"$OUT" 2>&1; expect_rc $? 4
    expect_text "--no-weights --set model=recipes/models/cosmos3-nano"
    for r in 1gpu-cosmos3-nano-720p:cosmos3-nano:1 8gpu-cosmos3-nano-720p:cosmos3-nano:8 \
             nvl72-cosmos3-super:cosmos3-super:72; do
      IFS=: read -r f m n <<< "$r"
      "$VGEN" plan --recipe "recipes/$f.yaml" --world "$n" --predict --hardware h200 --no-weights \
        --set "model=recipes/models/$m" >"$OUT" 2>&1
      expect_rc $? 0
      expect_text "understanding tower: resident"
      expect_text "prompt prefill"
      expect_text "prompt-prefix attention"
    done ;;
  cosmos3_stream)
    # Cosmos3-Super on an 80 GB H100: text.device auto streams the understanding tower and fits; on an
    # H200 both towers stay resident. cpu is Wan's value, stream Cosmos 3's: each refused by its key.
    SUPER=(--no-weights --set model=recipes/models/cosmos3-super)
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 1 "${SUPER[@]}" --predict \
      --hardware h100-hgx8 >"$OUT" 2>&1; expect_rc $? 0
    expect_text "understanding tower: streamed from pinned host memory for each prefill"
    expect_text "text.device auto: the estimate with it resident"
    expect_text "understanding tower: 2 device layer slots for the streamed prefill"
    expect_text "streamed for it:"
    grep -q "does not fit" "$OUT" && fail "streamed, it should fit"
    # --rank weighs it mesh by mesh (the recipe's one-rank mesh is not one of two ranks).
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 2 "${SUPER[@]}" --predict --rank \
      --hardware h100-hgx8 >"$OUT" 2>&1; expect_rc $? 0
    grep -qE '^ +1  dp ' "$OUT" || fail "no ranked mesh"
    grep -q "does not fit" "$OUT" && fail "a ranked mesh does not fit"
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 1 "${SUPER[@]}" --predict \
      --hardware h200 >"$OUT" 2>&1; expect_rc $? 0
    expect_text "understanding tower: resident"
    expect_text "fits 95% of hardware profile h200"
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 1 "${SUPER[@]}" --predict \
      --hardware h200 --set text.device=stream >"$OUT" 2>&1; expect_rc $? 0
    expect_text "understanding tower: streamed from pinned host memory for each prefill"
    "$VGEN" plan --recipe recipes/1gpu-cosmos3-nano-720p.yaml --world 1 "${SUPER[@]}" \
      --set text.device=cpu >"$OUT" 2>&1; expect_rc $? 3
    expect_text "text.device cpu"
    "$VGEN" plan --recipe recipes/1gpu-14b.yaml --world 1 "${COPY[@]}" --set text.device=stream >"$OUT" 2>&1
    expect_rc $? 3
    expect_text "text.device stream" ;;
  recipe_hardware)
    "$VGEN" plan --recipe recipes/nvl72-14b.yaml --world 72 --predict "${COPY[@]}" >"$OUT" 2>&1; expect_rc $? 0
    expect_text "hardware profile: gb200-nvl72 (from the recipe's \`hardware\` key)"
    "$VGEN" plan --recipe recipes/nvl72-14b.yaml --world 72 --predict --hardware h200 "${COPY[@]}" >"$OUT" 2>&1
    expect_rc $? 0
    expect_text "hardware profile: h200 (from --hardware)" ;;
  no_hardware)
    CUDA_VISIBLE_DEVICES= "$VGEN" plan --recipe recipes/8gpu-14b.yaml --world 8 --predict "${COPY[@]}" >"$OUT" 2>&1
    expect_rc $? 2
    expect_text "this machine has no GPU to detect"
    for p in b200-hgx8 gb200-nvl72 h100-hgx8 h200; do expect_text "$p"; done
    [ "$(grep -c 'which hardware' "$OUT")" -eq 1 ] || fail "the error is not said exactly once" ;;
  rank_rows)
    "$VGEN" plan --recipe recipes/8gpu-14b.yaml --world 8 --predict --rank --top 1000 --hardware h200 "${COPY[@]}" \
      >"$OUT" 2>&1; expect_rc $? 0
    rows=$(grep -E '^ +[0-9]+  dp ' "$OUT" | sed -E 's/^ +[0-9]+  //; s/ {2,}.*//')
    [ -n "$rows" ] || fail "no rows"
    dup=$(sort <<<"$rows" | uniq -d | head -1)
    [ -z "$dup" ] || fail "mesh on two rows: $dup"
    grep -q ', dwdp' <<<"$rows" && fail "dwdp_size left in the mesh column"
    grep -qE '1: [0-9.]+  2: [0-9.]+' "$OUT" || fail "no memory per dwdp_size" ;;
  *) echo "unknown case $CASE"; exit 2 ;;
esac
echo "ok ($CASE)"
