#!/usr/bin/env bash
# One bad-input case under `mpirun -np 4`: vgen must exit with the documented code (non-zero, but 7
# when a bad prompt line fails alone and 0 for a warning) within the timeout, with a message naming
# the problem, said once over all ranks' output. Size and prompt-line cases (early=1) must be refused
# before any work: the batch never starts, or the bad line never reaches the text encoder.
# usage: bad_input.sh CASE VGEN_BIN SOURCE_DIR [MPIRUN ARGS...]
set -uo pipefail
case_name=$1 vgen=$2 src=$3
shift 3
mpirun=("$@")
[ ${#mpirun[@]} -eq 0 ] && mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src" || exit 2
recipe=recipes/demo-cpu.yaml
args=(--set "output.dir=$work/out")

copy_model() {
  cp -r tests/golden/wan21-tiny "$work/model" && chmod -R u+w "$work/model"
  args+=(--set "model=$work/model")
}
# A prompt file of one good line and, on line 2, what `printf` makes of $1; one quick step per video.
bad_line() {
  { echo "a small red cube turns"; printf "$1"; } > "$work/p.txt"
  args+=(--prompts "$work/p.txt" --set generation.num_inference_steps=1)
}
# The same as a JSONL file: a good line, then $1 on line 2.
bad_jsonl_line() {
  { echo '{"prompt": "a small red cube turns"}'; printf '%s\n' "$1"; } > "$work/p.jsonl"
  args+=(--prompts "$work/p.jsonl" --set generation.num_inference_steps=1)
}
# Replaces a component's weights with a crafted safetensors file: craft FILE HEADER_JSON DATA_BYTES
craft() {
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
path, header, n = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
header += b" " * (-len(header) % 8)
open(path, "wb").write(struct.pack("<Q", len(header)) + header + bytes(n))
PY
}
# Renames a tensor in a safetensors header in place (same length): rename_tensor FILE OLD NEW
rename_tensor() {
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
p, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]
assert len(old) == len(new) and old in b[8:8 + n]
open(p, 'wb').write(b[:8] + b[8:8 + n].replace(old, new) + b[8 + n:])
PY
}

case $case_name in
  malformed_yaml)
    printf 'model: tests/golden/wan21-tiny\ngeneration:\n  height: [32, 48\n' > "$work/r.yaml"
    recipe=$work/r.yaml code=3 msg="malformed YAML" ;;
  unknown_key)
    sed 's/ulysses_size: 2/ulysess_size: 2/' recipes/demo-cpu.yaml > "$work/r.yaml"
    recipe=$work/r.yaml code=3 msg="parallel_config.ulysess_size: unknown key" ;;
  wrong_type)
    sed 's/height: 32/height: tall/' recipes/demo-cpu.yaml > "$work/r.yaml"
    recipe=$work/r.yaml code=3 msg="generation.height: expected an integer" ;;
  world_mismatch)
    args+=(--set parallel_config.ulysses_size=1)
    code=3 msg="world size 4 does not equal" ;;
  ulysses_heads)
    args+=(--set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=4)
    code=3 msg="does not divide the model's 2 attention heads" ;;
  fp8_bf16_blocks)
    # An index past the tiny model's 2 blocks: every rank refuses it before reading a weight.
    args+=(--set precision=fp8 --set "fp8_config.bf16_blocks=[0, 2]")
    code=3 msg="fp8_config.bf16_blocks[1] is 2, outside the model's 2 transformer blocks" ;;
  fp8_bf16_gemm_blocks)
    args+=(--set precision=fp8 --set "fp8_config.bf16_gemm_blocks=[-3]")
    code=3 msg="fp8_config.bf16_gemm_blocks[0] is -3, outside the model's 2 transformer blocks" ;;
  fp8_bf16_linears)
    # A name that is no block linear (the text K/V projections stay bf16 anyway): refused by name.
    args+=(--set precision=fp8 --set "fp8_config.bf16_linears=[attn2.to_q, attn2.to_v]")
    code=3 msg="fp8_config.bf16_linears[1] is 'attn2.to_v', not a block linear; one of attn1.to_q" ;;
  missing_model)
    args+=(--set "model=$work/no-such-model")
    code=4 msg="$work/no-such-model does not exist" ;;
  missing_component)
    copy_model; rm -rf "$work/model/vae"
    code=4 msg="component folder 'vae' is missing" ;;
  truncated_safetensors)
    copy_model
    f=$work/model/transformer/diffusion_pytorch_model.safetensors
    truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"
    code=4 msg="diffusion_pytorch_model.safetensors: tensor" ;;
  corrupt_header_length)
    copy_model
    f=$work/model/vae/diffusion_pytorch_model.safetensors
    printf '\xff\xff\xff\xff\xff\xff\x00\x00' | dd of="$f" bs=1 count=8 conv=notrunc status=none
    code=4 msg="header length" ;;
  offsets_out_of_range)
    copy_model
    craft "$work/model/vae/diffusion_pytorch_model.safetensors" \
      '{"decoder.conv_in.weight": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}' 8
    code=4 msg="offsets [0, 16) out of range" ;;
  missing_tensor)
    # A tensor renamed in the header (same length): every rank finds it missing before the load.
    copy_model
    rename_tensor "$work/model/transformer/diffusion_pytorch_model.safetensors" blocks.1.ffn.net.2.bias \
      blocks.1.ffn.net.9.bias
    code=4 msg="missing tensor 'blocks.1.ffn.net.2.bias' (expected shape [24])" ;;
  missing_vae_tensor)
    # The same for the VAE decoder, which loads on every rank of a parallel VAE group of 2.
    copy_model
    args+=(--set parallel_config.parallel_vae_size=2)
    rename_tensor "$work/model/vae/diffusion_pytorch_model.safetensors" decoder.conv_out.bias decoder.conv_out.bia_
    code=4 msg="missing tensor 'decoder.conv_out.bias'" ;;
  unknown_dtype)
    copy_model
    craft "$work/model/text_encoder/model.safetensors" \
      '{"shared.weight": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}}' 4
    code=4 msg="unsupported dtype 'F8_E4M3'" ;;
  unreadable_prompts)
    args+=(--prompts "$work/no-such-prompts.txt")
    code=5 msg="cannot read prompt file $work/no-such-prompts.txt" ;;
  unwritable_output)
    touch "$work/file"
    args=(--set "output.dir=$work/file/out")
    code=6 msg="cannot create output directory $work/file/out" ;;
  timing_unwritable)
    # Rank 0 fails inside the batch loop (its partial timing.json cannot replace a directory) while
    # the other ranks wait in the replica's collectives: the job must end, not hang.
    mkdir -p "$work/out/timing.json"
    code=6 msg="failed to write $work/out/timing.json" ;;
  reader_fails)
    # Rank 2's first checkpoint read fails (test hook) while the others read their shares and wait
    # for its segments: every rank ends, with the file and tensor named.
    export VGEN_INJECT_READ_ERROR=2
    code=4 msg="read error: Input/output error (VGEN_INJECT_READ_ERROR)" msg2=".safetensors: tensor '" ;;
  # Sizes beyond the model's (the RoPE tables' 1024 positions per axis, the tokenizer's 512 tokens):
  # refused by key before any weight is read, not per prompt after the load.
  frames_too_large)
    args+=(--set generation.num_frames=1000001)
    code=3 early=1 msg="generation.num_frames: 1000001 frames are 250001 latent frames" msg2="at most 4093 frames" ;;
  height_too_large)
    args+=(--set generation.height=16400)
    code=3 early=1 msg="generation.height: 16400 pixels are 1025 positions" msg2="at most 16384" ;;
  width_too_large)
    args+=(--set generation.width=16400)
    code=3 early=1 msg="generation.width: 16400 pixels are 1025 positions" msg2="at most 16384" ;;
  sequence_too_long)
    args+=(--set generation.max_sequence_length=100000000)
    code=3 early=1 msg="generation.max_sequence_length: 100000000 tokens are beyond the 512" msg2="at most 512" ;;
  negative_seed)
    args+=(--set generation.seed=-1)
    code=3 early=1 msg="generation.seed: must be an integer >= 0, got -1" ;;
  # A bad prompt line fails alone (exit 7 at the end), named by file and line; the other renders.
  prompt_nul_byte)
    bad_line 'a cube \000 turns\n'
    code=7 early=1 line=1 msg="$work/p.txt:2: the line holds a NUL byte" ;;
  prompt_too_long)
    bad_line "$(head -c 70000 /dev/zero | tr '\0' x)\n"
    code=7 early=1 line=1 msg="$work/p.txt:2: the line is 70000 bytes, longer than the 65536 bytes (64 KiB)" ;;
  # A line's images (docs/batch.md "Image inputs"): each problem fails its line alone, named by the
  # prompt file, the line and the image, before any work; a relative path is the prompt file's.
  image_missing)
    bad_jsonl_line '{"prompt": "a cube", "image": "no-such.png"}'
    code=7 early=1 line=1 msg="$work/p.jsonl:2: image $work/no-such.png: no such file" ;;
  image_corrupt)
    printf '\x89PNG\r\n\x1a\n\0\0\0' > "$work/bad.png"
    bad_jsonl_line '{"prompt": "a cube", "image": "bad.png"}'
    code=7 early=1 line=1 msg="$work/p.jsonl:2: image $work/bad.png: not a readable PNG file" ;;
  last_image_alone)
    bad_jsonl_line "{\"prompt\": \"a cube\", \"last_image\": \"$src/tests/golden-i2v/images/flf_last.png\"}"
    code=7 early=1 line=1 msg="$work/p.jsonl:2: 'last_image' ($src/tests/golden-i2v/images/flf_last.png) needs 'image'" ;;
  image_on_t2v)
    mkdir -p "$work/in" && cp tests/golden-i2v/images/i2v_first.png "$work/in/first.png"
    bad_jsonl_line '{"prompt": "a cube", "image": "in/first.png"}'
    code=7 early=1 line=1 msg="$work/p.jsonl:2: image $work/in/first.png: $src/tests/golden/wan21-tiny is a text-to-video checkpoint (Wan T2V); the line's image cannot be used" ;;
  # A line that one rank alone finds bad (an image only it cannot read; test hook) fails on every rank,
  # said once, and the other line renders (the ranks agree before any work, so none waits).
  line_fails_on_one_rank)
    bad_line 'a blue sphere rolls\n'
    export VGEN_INJECT_LINE_ERROR=2:2
    code=7 early=1 line=1 msg="$work/p.txt:2: injected failure on rank 2 (VGEN_INJECT_LINE_ERROR)" ;;
  # CFG on two ranks without guidance: the job runs, warned once.
  cfg_without_guidance)
    bad_line ''
    args+=(--set generation.guidance_scale=1)
    code=0 msg="parallel_config.cfg_size 2 with generation.guidance_scale 1 (<= 1): CFG is off" ;;
  # device: cuda where no GPU is usable: a recipe error in a CPU build; in a CUDA build (GPUs hidden,
  # or none) exit 12 with the CUDA runtime's reason, before any work.
  cuda_without_gpu)
    args+=(--set device=cuda)
    if "$vgen" --version | grep -q "build: CUDA OFF"; then
      code=3 early=1 msg="device: cuda, but this vgen was built without the CUDA backend"
    else
      export CUDA_VISIBLE_DEVICES=
      code=12 early=1 msg="device: cuda, but this host has no usable GPU: cudaGetDeviceCount failed: cudaError"
    fi ;;
  *) echo "bad_input.sh: unknown case $case_name" >&2; exit 2 ;;
esac

start=$(date +%s)
timeout 60 "${mpirun[@]}" -np 4 "$vgen" run --recipe "$recipe" "${args[@]}" > "$work/log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
cat "$work/log"
echo "--- case $case_name: exit code $rc after ${secs}s (expected $code, message: $msg)"
if [ $rc -eq 0 ] && [ "$code" -ne 0 ]; then echo "FAIL: vgen succeeded on a bad input"; exit 1; fi
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "FAIL: vgen did not exit within 60 s (hang)"; exit 1; fi
if [ $rc -ne "$code" ]; then echo "FAIL: exit code $rc, expected $code"; exit 1; fi
if ! grep -qF -- "$msg" "$work/log"; then echo "FAIL: the output does not name the problem ('$msg')"; exit 1; fi
if [ -n "${msg2:-}" ] && ! grep -qF -- "$msg2" "$work/log"; then echo "FAIL: the output lacks '$msg2'"; exit 1; fi
# A problem every rank finds before the first collective is said once (by the lowest rank that found
# it), not once per rank. A failed line is said once by the preflight and once in its video's status.
case $case_name in
  timing_unwritable|reader_fails) ;;
  *) n=$(grep -F -- "$msg" "$work/log" | grep -vc "warn: prompt [^ ]* failed: ")
     if [ "$n" -ne 1 ]; then echo "FAIL: the message appears $n times, expected once"; exit 1; fi ;;
esac
if [ "${early:-0}" = 1 ] && [ -z "${line:-}" ] && grep -q " to render" "$work/log"; then
  echo "FAIL: the batch started (the refusal came after the preflight)"; exit 1
fi
if [ -n "${line:-}" ]; then  # the bad line: failed with the message, never encoded or denoised
  python3 - "$work/out/timing.json" "$line" "$msg" <<'PY' || { echo "FAIL: timing.json (above)"; exit 1; }
import json, sys
videos = {v["index"]: v for v in json.load(open(sys.argv[1]))["videos"]}
bad, good = videos[int(sys.argv[2])], videos[1 - int(sys.argv[2])]
print("bad line:", {k: bad[k] for k in ("status", "error", "output")}, bad["seconds"]["steps"])
assert bad["status"] == "failed" and sys.argv[3] in bad["error"] and bad["output"] is None, bad
assert bad["seconds"]["steps"] == [] and bad["seconds"]["text_encode"] == 0, bad["seconds"]
assert good["status"] == "ok", good
PY
fi
echo PASS
