#!/usr/bin/env bash
# gpu_suite.sh's image-to-video suites in dry runs on one pretended GPU (nothing runs): the commands
# each one prints (the I2V DiT config and DIT_FP8, the Wan 2.2 VAE, the peer for whichever ran, the
# TI2V job at 704x1280x121 in E2E_ORDER with a made image, the 8-line I2V job on a 10-layer random
# checkpoint) and one dry-run record per measurement.
# Usage: gpu_suite_i2v_check.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root=$1 build=$2
fail() { echo "gpu_suite_i2v_check: $*" >&2; exit 1; }
# dry [VAR=VALUE...] SUITE...: the dry run's output
dry() {
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  env DRY_GPUS=1 OUT= "${envs[@]}" bash "$root/scripts/bench/gpu_suite.sh" --dry-run --build "$build" "$@" 2>&1
}
has() { grep -q -- "$2" <<<"$1" || fail "no '$2' in: $(grep -c . <<<"$1") lines"$'\n'"$1"; }

out=$(dry DIT_FP8=all dit_i2v vae22 peer_i2v ti2v i2v_batch)
echo "$out"
has "$out" 'vgen_dit_bench --config .*/recipes/models/wan2.1-i2v-14b-720p/transformer --shapes 480p,720p --layers 40 .*--fp8 all --out'
has "$out" 'vgen_vae_bench --config .*/recipes/models/wan2.2-ti2v-5b/vae --shapes 704x1280x121 --dtype bf16'
has "$out" 'diffusers_i2v_bench.py dit --config .*wan2.1-i2v-14b-720p/transformer --shapes 480p,720p --layers 40'
has "$out" 'diffusers_i2v_bench.py vae22 --config .*wan2.2-ti2v-5b/vae --shapes 704x1280x121'
has "$out" 'make_random_checkpoint.py --variant ti2v-5b --out .*/random-wan22-ti2v-5b --overwrite'
has "$out" 'make_bench_images.py --out .*/ti2v_in --count 1 --width 1280 --height 704'
has "$out" 'vgen run --recipe recipes/1gpu-ti2v-5b.yaml .*ti2v_in/prompts.jsonl .*generation.height=704 --set generation.width=1280 --set generation.num_frames=121 --set generation.num_inference_steps=4 --set generation.guidance_scale=5.0'
has "$out" 'diffusers_i2v_bench.py ti2v --model .*/random-wan22-ti2v-5b --image .*/ti2v_in/image_0.png .*--height 704 --width 1280 --frames 121 --steps 4 --guidance 5'
has "$out" 'make_random_checkpoint.py --variant i2v-14b --layers 10 --out .*/random-wan21-i2v-14b-l10'
has "$out" 'make_bench_images.py --out .*/i2v_batch_in --count 8 --width 832 --height 480'
has "$out" 'vgen run --recipe recipes/1gpu-i2v-480p.yaml --set model=.*/random-wan21-i2v-14b-l10 --prompts .*/i2v_batch_in/prompts.jsonl'
# E2E_ORDER default "vgen peer": vgen's TI2V run first
order=$(grep -E 'vgen run --recipe recipes/1gpu-ti2v|diffusers_i2v_bench.py ti2v' <<<"$out")
grep -q 'vgen run' <<<"$(head -1 <<<"$order")" || fail "ti2v: vgen not first in the default order"
recs=$(grep -c '"dry_run": true' "$build/gpu_suite_dry_run.jsonl")
[ "$recs" -ge 7 ] || fail "$recs dry-run records, expected 7 (dit_i2v, vae22, 2 peer_i2v, 2 ti2v, i2v_batch)"
for s in dit_i2v vae22 peer_i2v ti2v i2v_batch; do
  grep -q "\"suite\": \"$s\"" "$build/gpu_suite_dry_run.jsonl" || fail "no $s record"
done

# The peer follows the suites that ran; E2E_ORDER reverses the TI2V processes.
out=$(dry E2E_ORDER="peer vgen" dit_i2v peer_i2v ti2v)
grep -q 'diffusers_i2v_bench.py vae22' <<<"$out" && fail "peer_i2v ran vae22 without vae22"
has "$out" 'diffusers_i2v_bench.py dit '
order=$(grep -E 'vgen run --recipe recipes/1gpu-ti2v|diffusers_i2v_bench.py ti2v' <<<"$out")
grep -q 'diffusers_i2v_bench.py ti2v' <<<"$(head -1 <<<"$order")" || fail "E2E_ORDER='peer vgen': peer not first"
out=$(dry I2V_LAYERS=4 I2V_LINES=3 TI2V_MODEL=/ckpt/ti2v i2v_batch ti2v)
has "$out" 'make_random_checkpoint.py --variant i2v-14b --layers 4 --out .*/random-wan21-i2v-14b-l4'
has "$out" '--count 3 --width 832'
grep -q 'variant ti2v-5b' <<<"$out" && [ ! -f /ckpt/ti2v/model_index.json ] && has "$out" '--out /ckpt/ti2v'
echo "gpu_suite_i2v_check: ok"
