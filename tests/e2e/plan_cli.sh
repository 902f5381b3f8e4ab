#!/usr/bin/env bash
# `vgen plan` as a user meets it: a recipe whose model is not here names the config-only copy to
# plan with; --predict prices on the recipe's `hardware` profile and says so; without --hardware, a
# `hardware` key or a GPU it stops with exit 2 listing the profiles; --rank rows are distinct meshes;
# every config-only copy plans, or (the image-to-video ones vgen does not render yet) fails with one
# error naming a file of that copy.
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
    for d in recipes/models/*/; do
      d=${d%/}
      "$VGEN" plan --recipe recipes/1gpu-14b.yaml --world 1 --no-weights --set "model=$d" >"$OUT" 2>&1; rc=$?
      case "$d" in
        */wan2.?-t2v-*) expect_rc $rc 0; expect_text "model: $SRC/$d (" ;;
        *) [ $rc -eq 0 ] || [ $rc -eq 4 ] || fail "$d: exit $rc, expected 0 or 4"
           if [ $rc -eq 4 ]; then
             [ "$(grep -c 'error:' "$OUT")" -eq 1 ] || fail "$d: not one error"
             grep 'error:' "$OUT" | grep -qF "$SRC/$d/" || fail "$d: the error names no file of $d"
           else
             expect_text "model: $SRC/$d ("
           fi ;;
      esac
    done ;;
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
