#!/usr/bin/env bash
# A distilled Cosmos 3 checkpoint end to end on the CPU: the tiny checkpoint of tests/golden-cosmos3
# laid out as NVIDIA's converter lays out the few-step ones (a stochastic FlowMatchEulerDiscreteScheduler
# with fixed_step_requires_explicit_sigmas; modular_model_index.json with is_distilled and
# distilled_sigmas). A recipe with CFG or another step count is refused (exit 3); with 4 steps and
# guidance 1 a text line and an image line render MP4s at the fixed sigmas' timesteps; a second run
# gives the same latents (the per-step noise is seeded), Ulysses 2 the one-rank latents.
# Usage: cosmos3_distilled_test.sh <vgen> <source dir>
set -u
VGEN=$1; SRC=$2
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" cosmos3_distilled
D="$W/distilled"
cp -r "$SRC/tests/golden-cosmos3/cosmos3-tiny" "$D"
python3 - "$D" <<'PY' || fail "making the distilled copy"
import json, sys
d = sys.argv[1]
sig = [1.0, 0.9375, 0.8333333333333334, 0.625]
json.dump({"_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000, "shift": 1.0,
           "stochastic_sampling": True, "fixed_step_requires_explicit_sigmas": True,
           "fixed_step_sampler_config": {"sample_type": "sde", "t_list": sig}},
          open(d + "/scheduler/scheduler_config.json", "w"))
idx = json.load(open(d + "/model_index.json"))
idx["scheduler"] = ["diffusers", "FlowMatchEulerDiscreteScheduler"]
json.dump(idx, open(d + "/model_index.json", "w"))
json.dump({"_class_name": "Cosmos3DistilledModularPipeline", "is_distilled": True, "distilled_sigmas": sig},
          open(d + "/modular_model_index.json", "w"))
PY
cat > "$W/p.jsonl" <<J
{"prompt": "A cat walks on the grass, realistic style."}
{"prompt": "a dog runs", "image": "$SRC/tests/golden-cosmos3/images/i2v_first.png"}
J
common=(--set model="$D" --set generation.height=32 --set generation.width=48 --set generation.num_frames=9
        --set generation.max_sequence_length=256 --set parallel_config.cfg_size=1 --set output.save_tensors=true)
run() {  # name np extra...
  local name=$1 np=$2; shift 2
  timeout 300 $MPIRUN -np "$np" --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --prompts "$W/p.jsonl" --out "$W/$name" "$@" > "$W/log_$name" 2>&1
}
run cfg 1 --set generation.num_inference_steps=4 --set generation.guidance_scale=5 --set parallel_config.ulysses_size=1
[ $? = 3 ] || fail "guidance 5 on a distilled checkpoint: expected exit 3"
grep -q "guidance baked into the weights" "$W/log_cfg" || { cat "$W/log_cfg"; fail "no guidance message"; }
run steps 1 --set generation.num_inference_steps=8 --set generation.guidance_scale=1 --set parallel_config.ulysses_size=1
[ $? = 3 ] || fail "8 steps on a 4-sigma checkpoint: expected exit 3"
grep -q "samples on its 4 fixed sigmas" "$W/log_steps" || { cat "$W/log_steps"; fail "no step-count message"; }
ok=(--set generation.num_inference_steps=4 --set generation.guidance_scale=1)
run one 1 "${ok[@]}" --set parallel_config.ulysses_size=1 || { tail -20 "$W/log_one"; fail "one rank"; }
run again 1 "${ok[@]}" --set parallel_config.ulysses_size=1 || { tail -20 "$W/log_again"; fail "second run"; }
run u2 2 "${ok[@]}" --set parallel_config.ulysses_size=2 || { tail -20 "$W/log_u2"; fail "ulysses 2"; }
grep -q "step 4/4 t=625" "$W/log_one" || { cat "$W/log_one"; fail "the last step is not at sigma 0.625"; }
python3 - "$W" <<'PY' || fail "distilled renders"
import json, math, os, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
runs = {r: json.load(open(os.path.join(w, r, "timing.json")))["videos"] for r in ("one", "again", "u2")}
for r, v in runs.items():
    assert [x["status"] for x in v] == ["ok", "ok"], (r, v)
for v in runs["one"]:
    a = latents(os.path.join(w, "one", stem(v) + ".safetensors"))
    b = latents(os.path.join(w, "again", stem(v) + ".safetensors"))
    c = latents(os.path.join(w, "u2", stem(v) + ".safetensors"))
    assert a == b, stem(v) + ": a second run differs"
    rel = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, c)) / sum(x * x for x in a))
    assert rel <= 1e-5, f"{stem(v)}: ulysses 2 rel-L2 {rel}"
print("distilled: CFG and the step count refused; 2 lines rendered, seeded, ulysses 2 = one rank")
PY
echo "ok (e2e_cosmos3_distilled)"
