#!/usr/bin/env bash
# gpu_suite.sh's Cosmos 3 suites in dry runs on one pretended GPU (nothing runs): the commands each
# one prints (vgen_cosmos3_bench and the peer's dit at the same config, layers, shape and prompt
# lengths in COSMOS_ORDER, COSMOS_FP8's extra vgen run, the Super config at its whole depth, the
# random Nano checkpoint and the one-video runs in E2E_ORDER) and one dry-run record per measurement.
# Usage: gpu_suite_cosmos3_check.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root=$1 build=$2
fail() { echo "gpu_suite_cosmos3_check: $*" >&2; exit 1; }
# dry [VAR=VALUE...] SUITE...: the dry run's output
dry() {
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  env DRY_GPUS=1 OUT= "${envs[@]}" bash "$root/scripts/bench/gpu_suite.sh" --dry-run --build "$build" "$@" 2>&1
}
has() { grep -q -- "$2" <<<"$1" || fail "no '$2' in: $(grep -c . <<<"$1") lines"$'\n'"$1"; }

out=$(dry cosmos3 cosmos3_e2e)
echo "$out"
has "$out" 'cmake --build .* --target vgen vgen_cosmos3_bench'
common='--config .*/recipes/models/cosmos3-nano/transformer --layers 12 --shapes 720p --prompt-tokens 256 --uncond-tokens 64 --reps 3 --warmup 1'
has "$out" "vgen_cosmos3_bench $common --steps 35"
has "$out" "diffusers_cosmos3_bench.py dit $common"
has "$out" 'make_random_checkpoint.py --variant cosmos3-nano --layers 12 --out .*/random-cosmos3-nano-l12 --overwrite'
has "$out" 'vgen run --recipe recipes/1gpu-cosmos3-nano-720p.yaml --set model=.*/random-cosmos3-nano-l12 .*generation.num_inference_steps=35'
has "$out" 'diffusers_cosmos3_bench.py pipeline --model .*/random-cosmos3-nano-l12 .*--height 720 --width 1280 --frames 189 --steps 35 --guidance 6 --flow-shift 10'
# the default orders: vgen first in both suites
order=$(grep -E 'vgen_cosmos3_bench |diffusers_cosmos3_bench.py dit' <<<"$out")
grep -q 'vgen_cosmos3_bench' <<<"$(head -1 <<<"$order")" || fail "cosmos3: vgen not first in the default order"
order=$(grep -E 'vgen run --recipe recipes/1gpu-cosmos3|diffusers_cosmos3_bench.py pipeline' <<<"$out")
grep -q 'vgen run' <<<"$(head -1 <<<"$order")" || fail "cosmos3_e2e: vgen not first in the default order"
recs=$(grep -c '"dry_run": true' "$build/gpu_suite_dry_run.jsonl")
[ "$recs" -eq 4 ] || fail "$recs dry-run records, expected 4 (cosmos3 vgen and peer, cosmos3_e2e vgen and peer)"
for s in cosmos3 cosmos3_e2e; do
  grep -q "\"suite\": \"$s\"" "$build/gpu_suite_dry_run.jsonl" || fail "no $s record"
done

# ABBA, fp8, Super at its depth, another shape; the e2e model's depth and steps.
out=$(dry COSMOS_ORDER="vgen peer peer vgen" COSMOS_FP8=all COSMOS_LAYERS=all COSMOS_SHAPES=480x832x93 \
      COSMOS_CONFIG=recipes/models/cosmos3-super/transformer COSMOS_E2E_LAYERS=all COSMOS_E2E_STEPS=4 cosmos3 cosmos3_e2e)
[ "$(grep -c 'vgen_cosmos3_bench --config .*cosmos3-super/transformer --shapes 480x832x93' <<<"$out")" -eq 3 ] ||
  fail "COSMOS_ORDER with COSMOS_FP8: not 3 vgen runs of the Super config at its depth"$'\n'"$out"
[ "$(grep -c 'diffusers_cosmos3_bench.py dit --config .*cosmos3-super' <<<"$out")" -eq 2 ] || fail "not 2 peer runs"
has "$out" 'vgen_cosmos3_bench .*--fp8 all'
grep -q -- '--layers' <<<"$(grep 'cosmos3_bench' <<<"$out")" && fail "COSMOS_LAYERS=all passed --layers"
has "$out" 'make_random_checkpoint.py --variant cosmos3-nano --out .*/random-cosmos3-nano-lall --overwrite'
has "$out" 'generation.num_inference_steps=4'
has "$out" 'diffusers_cosmos3_bench.py pipeline .*--steps 4'
echo "gpu_suite_cosmos3_check: ok"
