#!/usr/bin/env bash
# Cosmos 3 end to end on the CPU with the tiny checkpoint (tests/golden-cosmos3): a JSONL of prompt
# lines (text to video, and image to video from a first frame) renders decodable MP4s on one rank;
# CFG 2 and DP 2 over two ranks give the same latents per line; a line with a last frame fails alone (the
# family takes a first frame only); the text cache serves a second run the same latents; Ulysses 2
# renders the lines as one rank (fp32 rounding); a Ulysses degree that does not divide the heads is
# refused at recipe check time (exit 3); `vgen plan` names the
# family, the variant, the prompt tokens and the prefill.
# Usage: cosmos3_test.sh <vgen> <source dir>
set -u
VGEN=$1; SRC=$2
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" cosmos3
common=(--set model="$SRC/tests/golden-cosmos3/cosmos3-tiny" --set generation.height=32 --set generation.width=48
        --set generation.num_frames=9 --set generation.num_inference_steps=3 --set generation.guidance_scale=6
        --set generation.max_sequence_length=256 --set generation.negative_prompt="blurry, low quality"
        --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1 --set output.save_tensors=true)
run() {  # name np extra...
  local name=$1 np=$2; shift 2
  timeout 300 $MPIRUN -np "$np" --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --prompts "$W/p.jsonl" --out "$W/$name" "$@" > "$W/log_$name" 2>&1
}
cat > "$W/p.jsonl" <<J
{"prompt": "A cat walks on the grass, realistic style."}
{"prompt": "a red cube turns slowly", "seed": 7}
{"prompt": "a dog runs", "image": "$SRC/tests/golden-cosmos3/images/i2v_first.png"}
{"prompt": "a dog", "image": "$SRC/tests/golden-cosmos3/images/i2v_first.png", "last_image": "$SRC/tests/golden-cosmos3/images/i2v_first.png"}
J
run one 1; rc=$?
[ $rc = 7 ] || { tail -20 "$W/log_one"; fail "expected exit 7 (the last_image line fails), got $rc"; }
run cfg2 2 --set parallel_config.cfg_size=2; rc=$?
[ $rc = 7 ] || { tail -20 "$W/log_cfg2"; fail "cfg 2: expected exit 7, got $rc"; }
run dp2 2 --set parallel_config.dp_size=2; rc=$?
[ $rc = 7 ] || { tail -20 "$W/log_dp2"; fail "dp 2: expected exit 7, got $rc"; }
python3 - "$W" <<'PY' || fail "cosmos3 text to video"
import json, os, subprocess, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
runs = {r: {v["index"]: v for v in json.load(open(os.path.join(w, r, "timing.json")))["videos"]}
        for r in ("one", "cfg2", "dp2")}
for r, v in runs.items():
    assert [v[i]["status"] for i in range(4)] == ["ok", "ok", "ok", "failed"], (r, [v[i]["status"] for i in range(4)])
    assert "last_image" in v[3]["error"], v[3]["error"]
    assert v[2]["seconds"]["vae_encode"] > 0, v[2]["seconds"]
    for i in (0, 1, 2):
        n = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height,nb_read_frames", "-of", "csv=p=0", v[i]["output"]],
                           capture_output=True, text=True)
        assert n.returncode == 0 and n.stdout.strip() == "48,32,9", (v[i]["output"], n.stdout, n.stderr)
a = [latents(os.path.join(w, "one", stem(runs["one"][i]) + ".safetensors")) for i in (0, 1, 2)]
assert a[0] != a[1], "two prompts and seeds gave the same latents"
for mesh in ("cfg2", "dp2"):
    b = [latents(os.path.join(w, mesh, stem(runs["one"][i]) + ".safetensors")) for i in (0, 1, 2)]
    for i in (0, 1, 2):
        assert a[i] == b[i], f"line {i}: {mesh} latents differ from one rank"
print("3 lines (2 text, 1 image) rendered and decodable, the last_image line failed alone; cfg 2 and dp 2 equal one rank")
PY
# The text cache keys the rendered conversation (the video's size and fps, the negative prompt's
# inverse sentences): a second run reads every entry and renders the same latents.
for r in cache1 cache2; do
  run $r 1 --set text.cache_embeddings=true --set text.cache_dir="$W/text_cache"; rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log_$r"; fail "$r: expected exit 7, got $rc"; }
done
python3 - "$W" <<'PY' || fail "text cache"
import json, os, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
entries = [f for f in os.listdir(os.path.join(w, "text_cache")) if f.endswith(".safetensors")]
assert len(entries) == 4, entries  # the three lines' conversations and the negative one (one video size)
one = {v["index"]: v for v in json.load(open(os.path.join(w, "one", "timing.json")))["videos"]}
for i in (0, 1, 2):
    a = latents(os.path.join(w, "one", stem(one[i]) + ".safetensors"))
    b = latents(os.path.join(w, "cache2", stem(one[i]) + ".safetensors"))
    assert a == b, f"line {i}: latents through the text cache differ"
print("text cache: 4 entries, the second run's latents equal the first's")
PY
run ulysses2 2 --set parallel_config.ulysses_size=2; rc=$?
[ $rc = 7 ] || { tail -20 "$W/log_ulysses2"; fail "ulysses 2: expected exit 7, got $rc"; }
python3 - "$W" <<'PY' || fail "ulysses 2"
import json, math, os, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
one = {v["index"]: v for v in json.load(open(os.path.join(w, "one", "timing.json")))["videos"]}
for i in (0, 1, 2):
    a = latents(os.path.join(w, "one", stem(one[i]) + ".safetensors"))
    b = latents(os.path.join(w, "ulysses2", stem(one[i]) + ".safetensors"))
    rel = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)) / sum(x * x for x in a))
    assert len(a) == len(b) and rel <= 1e-5, f"line {i}: ulysses 2 latents rel-L2 {rel} from one rank"
print("ulysses 2: the three lines' latents match one rank (fp32 merge order)")
PY
run ulysses3 3 --set parallel_config.ulysses_size=3; rc=$?
[ $rc = 3 ] || { tail -20 "$W/log_ulysses3"; fail "ulysses 3: expected exit 3, got $rc"; }
grep -q "ulysses_size 3 does not divide the model's 4 attention heads" "$W/log_ulysses3" || {
  tail -20 "$W/log_ulysses3"; fail "ulysses 3: no message naming the heads"; }
"$VGEN" plan --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --world 1 > "$W/plan" 2>&1 || {
  cat "$W/plan"; fail "vgen plan"; }
for want in "family: cosmos3 (Cosmos 3 T2V" "prompt tokens: " "prefill: the understanding tower"; do
  grep -qF "$want" "$W/plan" || { cat "$W/plan"; fail "vgen plan: no '$want'"; }
done
echo "ulysses 3 refused (exit 3); plan names the family, the prompt tokens and the prefill"
