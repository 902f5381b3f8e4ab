#!/usr/bin/env bash
# precision fp8 on one CPU mesh against one rank (docs/fp8.md "Meshes"): the tiny Wan 2.1 model
# renders two prompts (CFG on, 4 steps, 160 tokens: two 128-token scale blocks on one rank, divisible
# by every degree here) with output.save_tensors, on one rank in fp32 and in fp8 (the CPU emulation)
# and on the mesh in fp8; `vgen compare` measures the final latents and the video.
#   exact  (cfg, Ulysses, dp, DWDP, parallel VAE): the mesh computes every quantisation group as one
#          rank does, so it matches one rank to fp32 rounding: latents rel-L2 <= 1e-5, PSNR >= 100 dB.
#   approx (Ring, Attention2D): the self-attention quantises per key chunk and query shard; the
#          mesh's fp8 error against fp32, e_mesh, must be <= 1.5·e_1 (e_1: one rank's, measured here),
#          so the two fp8 renders lie within e_mesh + e_1 <= 2.5·e_1 of each other (checked too).
# Usage: fp8_meshes.sh <vgen> <source dir> <exact|approx> <ranks> [--set parallel_config.k=v ...]
#        [--set fp8_config.k=v ...]   (fp8_config, fp4_config and precision sets apply to the one-rank
#        quantised render too: --set precision=fp4 checks precision fp4's emulation the same way)
# VGEN_TEST_BLAS_CORETYPE=Haswell runs every render on OpenBLAS's Haswell kernels where the CPU has
# AVX2 and FMA (their sgemm rounds a row by its place in the call: the case the emulation's row-wise
# fp32 linears exist for), whatever this host's OpenBLAS would pick.
set -u
VGEN=$1; SRC=$2; CLASS=$3; NP=$4; shift 4
if [ -n "${VGEN_TEST_BLAS_CORETYPE:-}" ]; then
  if grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=$VGEN_TEST_BLAS_CORETYPE
  else
    echo "fp8_meshes: no AVX2/FMA here: the host's own BLAS kernels run (VGEN_TEST_BLAS_CORETYPE ignored)"
  fi
fi
fp8=(--set precision=fp8); mesh=()
while [ $# -gt 0 ]; do
  case "$2" in fp8_config.* | fp4_config.* | precision=*) fp8+=("$1" "$2") ;; *) mesh+=("$1" "$2") ;; esac
  shift 2
done
source "$SRC/tests/e2e/e2e_common.sh" fp8_mesh
printf 'a red cube turns slowly\na small blue sphere rolls over a wooden table\n' > "$W/p.txt"
common=(--recipe "$SRC/recipes/demo-cpu.yaml" --set model="$SRC/tests/golden/wan21-tiny" --prompts "$W/p.txt"
        --set generation.height=64 --set generation.width=128 --set generation.num_frames=17
        --set generation.num_inference_steps=4 --set generation.guidance_scale=5.0
        --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1
        --set output.save_tensors=true --set output.skip_existing=false)
render() {  # name np sets... (one rank runs without mpirun: seconds less)
  local name=$1 np=$2; shift 2
  local launch=("$MPIRUN" -np "$np" --oversubscribe)
  [ "$np" -eq 1 ] && launch=()
  timeout 300 "${launch[@]}" "$VGEN" run "${common[@]}" "$@" --out "$W/$name" < /dev/null \
    > "$W/log_$name" 2>&1 || { tail -20 "$W/log_$name"; fail "$name exited non-zero"; }
}
# The summary line's worst latents rel-L2 of `vgen compare A B` (fails when a video is missing).
worst() {
  "$VGEN" compare "$1" "$2" > "$W/cmp" 2>&1 || { cat "$W/cmp"; fail "vgen compare $1 $2 failed"; }
  cat "$W/cmp" >&2
  sed -n 's/.*worst latents rel-L2 \([^,]*\),.*/\1/p' "$W/cmp"
}

render one32 1
render one8 1 "${fp8[@]}"
render mesh8 "$NP" "${fp8[@]}" "${mesh[@]}"
case "$CLASS" in
  exact)
    "$VGEN" compare "$W/one8" "$W/mesh8" --max-rel-l2 1e-5 --min-psnr 100 || fail "mesh differs from one rank beyond fp32 rounding"
    echo "fp8 mesh (${fp8[*]} ${mesh[*]}): matches one rank to fp32 rounding" ;;
  approx)
    e1=$(worst "$W/one32" "$W/one8"); em=$(worst "$W/one32" "$W/mesh8"); pair=$(worst "$W/one8" "$W/mesh8")
    [ -n "$e1" ] && [ -n "$em" ] && [ -n "$pair" ] || fail "no rel-L2 parsed ($e1 / $em / $pair)"
    awk -v a="$em" -v b="$e1" 'BEGIN { exit !(a + 0 <= 1.5 * b && b + 0 > 0) }' ||
      fail "mesh fp8 error $em > 1.5 x one rank's $e1"
    awk -v a="$pair" -v b="$e1" 'BEGIN { exit !(a + 0 <= 2.5 * b) }' || fail "mesh vs one rank $pair > 2.5 x $e1"
    echo "fp8 mesh (${fp8[*]} ${mesh[*]}): error vs fp32 $em (one rank $e1), vs one rank $pair <= 2.5 x $e1" ;;
  *) fail "class must be exact or approx, got $CLASS" ;;
esac
