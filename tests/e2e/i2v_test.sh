#!/usr/bin/env bash
# Image-to-video jobs on the CPU with the tiny FLF2V checkpoint (docs/batch.md "Image inputs"):
#   batch   Wan 2.1 I2V, a JSONL of image lines (first frame; a last frame it cannot take; a missing
#           file; no image): the good lines render decodable MP4s with the encoders' seconds in
#           timing.json, the bad ones fail alone (exit 7); the same job on dp 2 gives the same
#           latents per line; a rerun reuses every video, and a changed image renders its line again.
#   last    Wan 2.1 FLF2V needs a last frame; Wan 2.2 I2V-A14B takes one or not.
#   fbcache the first-block cache on image lines: one rank and CFG 2 skip the same forwards.
#   area    generation.image_max_area sizes a line from its image's aspect ratio.
# Usage: i2v_test.sh <vgen> <source dir> <case>
set -u
VGEN=$1; SRC=$2; CASE=$3
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" i2v
IMG=$SRC/tests/golden-i2v/images
common=(--set generation.height=32 --set generation.width=48
        --set generation.num_frames=5 --set generation.num_inference_steps=2 --set generation.max_sequence_length=8
        --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1 --set output.save_tensors=true
        --set output.skip_existing=true)
run() {  # name np extra...
  local name=$1 np=$2; shift 2
  timeout 300 $MPIRUN -np "$np" --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --prompts "$W/p.jsonl" --out "$W/$name" "$@" > "$W/log_$name" 2>&1
}

case $CASE in
batch)
  # Wan 2.1 I2V (CLIP tokens of the first frame): a line with a last frame, a missing file and a
  # text-only line fail alone.
  common+=(--set model="$SRC/tests/golden-i2v/wan21-i2v-tiny")
  cp "$IMG/flf_first.png" "$W/first.png"
  cat > "$W/p.jsonl" <<J
{"prompt": "a cat walks on the grass", "image": "first.png"}
{"prompt": "a cat walks on the grass", "image": "first.png", "last_image": "$IMG/flf_last.png"}
{"prompt": "a dog", "image": "no-such.png"}
{"prompt": "a bird, text only"}
{"prompt": "a fish", "image": "$IMG/i2v_first.png", "seed": 7}
J
  run one 1; rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log_one"; fail "expected exit 7 (three lines fail), got $rc"; }
  run dp2 2 --set parallel_config.dp_size=2; rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log_dp2"; fail "dp 2: expected exit 7, got $rc"; }
  python3 - "$W" <<'PY' || fail "image-to-video batch"
import json, os, subprocess, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
runs = {r: {v["index"]: v for v in json.load(open(os.path.join(w, r, "timing.json")))["videos"]} for r in ("one", "dp2")}
for r, v in runs.items():
    assert [v[i]["status"] for i in range(5)] == ["ok", "failed", "failed", "failed", "ok"], (r, [v[i]["status"] for i in range(5)])
    assert "p.jsonl:2: last_image" in v[1]["error"] and "takes a first frame only" in v[1]["error"], v[1]["error"]
    assert "p.jsonl:3: image" in v[2]["error"] and "no such file" in v[2]["error"], v[2]["error"]
    assert "p.jsonl:4:" in v[3]["error"] and "needs an 'image'" in v[3]["error"], v[3]["error"]
    for i in (0, 4):
        s = v[i]["seconds"]
        assert s["image_encode"] > 0 and s["vae_encode"] > 0, (r, i, s)
        n = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=width,height,nb_read_frames", "-of", "csv=p=0", v[i]["output"]],
                           capture_output=True, text=True)
        assert n.returncode == 0 and n.stdout.strip() == "48,32,5", (v[i]["output"], n.stdout, n.stderr)
for i in (0, 4):
    a = latents(os.path.join(w, "one", stem(runs["one"][i]) + ".safetensors"))
    b = latents(os.path.join(w, "dp2", stem(runs["one"][i]) + ".safetensors"))
    assert a == b, f"line {i}: dp 2 latents differ from one rank"
print("2 image lines rendered and decodable, 3 failed alone; dp 2 equals one rank")
PY
  # Resume: every finished video is reused; a changed first image renders its line again.
  run one 1; [ $? = 7 ] || fail "rerun: expected exit 7"
  python3 - "$W/one/timing.json" 1 1 <<'PY' || { tail -20 "$W/log_one"; fail "rerun: both videos reused"; }
import json, sys
v = {x["index"]: x for x in json.load(open(sys.argv[1]))["videos"]}
assert [v[0].get("reused", False), v[4].get("reused", False)] == [True, True], (v[0], v[4])
PY
  cp "$IMG/i2v_first.png" "$W/first.png"
  run one 1; [ $? = 7 ] || fail "rerun after the image changed: expected exit 7"
  python3 - "$W/one/timing.json" <<'PY' || { tail -20 "$W/log_one"; fail "a changed image must render its line again"; }
import json, sys
v = {x["index"]: x for x in json.load(open(sys.argv[1]))["videos"]}
assert [v[0].get("reused", False), v[4].get("reused", False)] == [False, True], (v[0], v[4])
PY
  echo "resume: both reused, then the line of the changed image rendered again"
  ;;
last)
  # Wan 2.1 FLF2V needs both frames; Wan 2.2 I2V-A14B (no image tokens) takes a last frame or not,
  # and the last frame changes the video.
  cat > "$W/p.jsonl" <<J
{"prompt": "a cat", "image": "$IMG/flf_first.png", "last_image": "$IMG/flf_last.png"}
{"prompt": "a cat", "image": "$IMG/flf_first.png"}
J
  run flf 1 --set model="$SRC/tests/golden-i2v/wan21-flf2v-tiny"; rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log_flf"; fail "FLF2V: expected exit 7 (the first-frame-only line fails), got $rc"; }
  run a14b 1 --set model="$SRC/tests/golden-i2v/wan22-i2v-tiny" || { tail -20 "$W/log_a14b"; fail "I2V-A14B run"; }
  python3 - "$W" <<'PY' || fail "last frames"
import json, os, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents, stem
w = sys.argv[1]
f = {x["index"]: x for x in json.load(open(os.path.join(w, "flf", "timing.json")))["videos"]}
assert f[0]["status"] == "ok" and f[1]["status"] == "failed" and "needs a 'last_image'" in f[1]["error"], (f[0], f[1])
a = {x["index"]: x for x in json.load(open(os.path.join(w, "a14b", "timing.json")))["videos"]}
assert a[0]["status"] == a[1]["status"] == "ok", (a[0], a[1])
assert a[0]["seconds"]["image_encode"] < 0.05, a[0]["seconds"]  # no image encoder
l0, l1 = (latents(os.path.join(w, "a14b", stem(a[i]) + ".safetensors")) for i in (0, 1))
assert l0 != l1, "the last frame changed nothing"
print("FLF2V: both frames needed; I2V-A14B: with and without a last frame, which counts")
PY
  ;;
fbcache)
  # The first-block cache on image lines (the condition channels and image tokens in every forward):
  # one rank and CFG on two ranks skip the same forwards, some but not all.
  echo "{\"prompt\": \"a cat\", \"image\": \"$IMG/i2v_first.png\"}" > "$W/p.jsonl"
  fb=(--set model="$SRC/tests/golden-i2v/wan21-i2v-tiny" --set generation.num_frames=9
      --set generation.num_inference_steps=8 --set cache_config.first_block_threshold=0.1)
  run fb1 1 "${fb[@]}" || { tail -20 "$W/log_fb1"; fail "fbcache one rank"; }
  run fb2 2 "${fb[@]}" --set parallel_config.cfg_size=2 || { tail -20 "$W/log_fb2"; fail "fbcache cfg 2"; }
  python3 - "$W" <<'PY' || fail "first-block cache on image lines"
import json, os, sys
w = sys.argv[1]
fb = [json.load(open(os.path.join(w, r, "timing.json")))["videos"][0]["first_block_cache"] for r in ("fb1", "fb2")]
assert fb[0] == fb[1], fb
assert 0 < fb[0]["hits"] < fb[0]["forwards"], fb[0]
print("fbcache: one rank and cfg 2 skip the same", fb[0]["hits"], "of", fb[0]["forwards"], "forwards")
PY
  ;;
area)
  # 32 × 48 image, area 24576 = 128 × 192 (multiple 16): the image's 2:3 aspect at 128 × 192.
  echo "{\"prompt\": \"a cat\", \"image\": \"$IMG/i2v_first.png\"}" > "$W/p.jsonl"
  run area 1 --set model="$SRC/tests/golden-i2v/wan21-i2v-tiny" --set generation.image_max_area=24576 || { tail -20 "$W/log_area"; fail "image_max_area run"; }
  python3 - "$W/area/timing.json" <<'PY' || fail "image_max_area size"
import json, subprocess, sys
v = json.load(open(sys.argv[1]))["videos"][0]
assert v["status"] == "ok" and (v["height"], v["width"]) == (128, 192), v
n = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of",
                    "csv=p=0", v["output"]], capture_output=True, text=True)
assert n.stdout.strip() == "192,128", n.stdout
PY
  echo "area: 128x192 from a 32x48 image"
  ;;
*) fail "unknown case $CASE" ;;
esac
