#!/usr/bin/env bash
# gpu_suite.sh's DIT_MODEL wiring, in a dry run (nothing runs): the one-GPU vgen_dit_bench and the
# diffusers peer both get --model, and vgen_dit_bench no --layers (the checkpoint's config sets them).
# Usage: gpu_suite_dit_model_check.sh REPO_ROOT BUILD_DIR
set -euo pipefail
out=$(DRY_GPUS=1 OUT= DIT_MODEL=/ckpt bash "$1/scripts/bench/gpu_suite.sh" --dry-run --build "$2" dit peer 2>&1)
cmds=$(grep -E 'vgen_dit_bench|diffusers_wan_bench' <<<"$out")
echo "$cmds"
fail() { echo "gpu_suite_dit_model_check: $*" >&2; exit 1; }
grep -q 'vgen_dit_bench .*--model /ckpt --out' <<<"$cmds" || fail "vgen_dit_bench without --model /ckpt"
grep -q 'diffusers_wan_bench.py --model /ckpt dit480 dit720' <<<"$cmds" || fail "the peer without --model /ckpt"
! grep 'vgen_dit_bench' <<<"$cmds" | grep -q -- '--layers' || fail "vgen_dit_bench still gets --layers"
echo "gpu_suite_dit_model_check: ok"
