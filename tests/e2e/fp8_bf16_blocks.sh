#!/usr/bin/env bash
# fp8_config.bf16_blocks and bf16_gemm_blocks reach the model from the recipe (one rank; docs/fp8.md
# "Switches"): on the tiny Wan 2.1 model (2 blocks), one prompt, CFG on, 3 steps, output.save_tensors:
#   every block listed ([0, -1])  -> the final latents and frames equal the plain render's byte for
#                                    byte: fp32 on the CPU (the emulation's bf16 is fp32), precision
#                                    bf16 on the GPU (no block quantises);
#   the first block only ([0])    -> differs from the plain render and from the plain fp8 render;
# and fp8_config.bf16_gemm_blocks (the listed blocks' linears in bf16, their attention in fp8):
#   every block listed            -> the fp8-attention-only render (fp8_config.gemm false), byte for byte;
#   the first block only          -> differs from that and from the plain fp8 render;
# every block in both lists: wholly bf16 (the plain render's bytes);
# and fp8_config.bf16_linears (linears by name in bf16 in every block):
#   all eight names               -> the fp8-attention-only render, byte for byte;
#   attn2.to_out.0 / attn1.to_k   -> each differs from the plain fp8 render and from the other.
# (The forward-level wiring is test_fp8's ForwardWiring; this checks the recipe key end to end.)
# Usage: fp8_bf16_blocks.sh <vgen> <source dir> [cpu|cuda]
set -u
VGEN=$1; SRC=$2; DEVICE=${3:-cpu}
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" fp8_blocks
printf 'a red cube turns slowly\n' > "$W/p.txt"
common=(--recipe "$SRC/recipes/demo-cpu.yaml" --set model="$SRC/tests/golden/wan21-tiny" --prompts "$W/p.txt"
        --set generation.height=32 --set generation.width=64 --set generation.num_frames=9
        --set generation.num_inference_steps=3 --set generation.guidance_scale=5.0
        --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1
        --set output.save_tensors=true --set output.skip_existing=false --set device="$DEVICE")
plain=(); [ "$DEVICE" = cuda ] && plain=(--set precision=bf16)
render() {  # name sets...
  local name=$1; shift
  timeout 300 "$VGEN" run "${common[@]}" "$@" --out "$W/$name" < /dev/null > "$W/log_$name" 2>&1 ||
    { tail -20 "$W/log_$name"; fail "$name exited non-zero"; }
}
render fp32 "${plain[@]}"
render fp8 --set precision=fp8
render all --set precision=fp8 --set "fp8_config.bf16_blocks=[0, -1]"
render first --set precision=fp8 --set "fp8_config.bf16_blocks=[0]"
render attn --set precision=fp8 --set fp8_config.gemm=false
render gemm_all --set precision=fp8 --set "fp8_config.bf16_gemm_blocks=[0, -1]"
render gemm_first --set precision=fp8 --set "fp8_config.bf16_gemm_blocks=[0]"
render both --set precision=fp8 --set "fp8_config.bf16_blocks=[0, 1]" --set "fp8_config.bf16_gemm_blocks=[0, -1]"
render lin_all --set precision=fp8 --set "fp8_config.bf16_linears=[attn1.to_q, attn1.to_k, attn1.to_v, attn1.to_out.0, attn2.to_q, attn2.to_out.0, ffn.net.0.proj, ffn.net.2]"
render lin_co --set precision=fp8 --set "fp8_config.bf16_linears=attn2.to_out.0"
# One of q/k/v in bf16: the device writes the norm's output in bf16 and quantises it for the other two.
render lin_k --set precision=fp8 --set "fp8_config.bf16_linears=[attn1.to_k]"

# The saved tensors (one .safetensors per video: final latents, float frames) of every block in bf16
# against the plain render ("fp32": fp32 on the CPU, bf16 on the GPU): same bytes.
same() {  # ref dir, dir, what: every saved tensor file of ref has the same bytes in dir
  local n=0 f
  for f in "$W/$1"/*.safetensors; do
    [ -e "$f" ] || break
    cmp -s "$f" "$W/$2/$(basename "$f")" || fail "$3: $(basename "$f") differs from the $1 render"
    n=$((n + 1))
  done
  [ "$n" -ge 1 ] || fail "no saved tensors (.safetensors) in $W/$1: $(ls "$W/$1")"
}
differs() {  # ref dir, dir, what (vgen compare exits 10 beyond --max-rel-l2 0)
  "$VGEN" compare "$W/$1" "$W/$2" --max-rel-l2 0 > "$W/cmp_$1_$2" 2>&1
  local rc=$?
  [ "$rc" -eq 10 ] || { cat "$W/cmp_$1_$2"; fail "$3 against $1: vgen compare exit $rc, expected 10 (differs)"; }
}
same fp32 all "bf16_blocks [0, -1]"
differs fp32 first "bf16_blocks [0]"
differs fp8 first "bf16_blocks [0]"
same attn gemm_all "bf16_gemm_blocks [0, -1]"
differs attn gemm_first "bf16_gemm_blocks [0]"
differs fp8 gemm_first "bf16_gemm_blocks [0]"
same fp32 both "every block in both lists"
same attn lin_all "bf16_linears: all eight"
differs attn lin_co "bf16_linears [attn2.to_out.0]"
differs fp8 lin_co "bf16_linears [attn2.to_out.0]"
differs fp8 lin_k "bf16_linears [attn1.to_k]"
differs lin_co lin_k "bf16_linears [attn1.to_k]"
echo "bf16_blocks ($DEVICE): all blocks = the plain render byte for byte, the first block alone differs from it and from fp8;" \
  "bf16_gemm_blocks: all blocks = fp8 attention only byte for byte, the first block alone differs from it and from fp8;" \
  "bf16_linears: all eight = fp8 attention only byte for byte, one linear differs from fp8"
