#!/usr/bin/env bash
# Runs recipes/demo-cpu.yaml under `mpirun -np 4` into a temporary folder and checks the MP4s
# (ffprobe: H.264, frame count and size from the recipe), timing.json and that each warning is
# printed once for the job (not once per rank); then reruns with output.skip_existing=true and checks
# that every video is skipped.
# usage: demo_check.sh VGEN_BIN SOURCE_DIR [MPIRUN ARGS...]
set -uo pipefail
vgen=$1 src=$2
shift 2
mpirun=("$@")
[ ${#mpirun[@]} -eq 0 ] && mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src" || exit 2
out=$work/out

fail() { echo "FAIL: $*"; exit 1; }

timeout 600 "${mpirun[@]}" -np 4 "$vgen" --recipe recipes/demo-cpu.yaml --out "$out" 2>&1 | tee "$work/log"
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] || fail "vgen exited with $rc"

# A warning every rank meets (the demo recipe's attention backend on the CPU) is said once per job.
python3 - "$work/log" <<'PY' || exit 1
import collections, re, sys
warnings = collections.Counter(m.group(1) for line in open(sys.argv[1], errors="replace")
                               if (m := re.match(r"\[r\d+\] warn: (.*)", line)))
assert any("attention_config.backend native has no effect" in w for w in warnings), f"no demo warning: {warnings}"
twice = {w: n for w, n in warnings.items() if n != 1}
assert not twice, f"warnings printed more than once over the 4 ranks: {twice}"
print(f"demo: {len(warnings)} warning line(s), each printed once over the 4 ranks")
PY

python3 - "$out" recipes/demo-cpu.yaml recipes/prompts/demo.txt <<'PY' || exit 1
import json, os, subprocess, sys
out, recipe, prompts = sys.argv[1:4]
n_prompts = sum(1 for l in open(prompts) if l.strip() and not l.strip().startswith("#"))
cfg = {}
for line in open(recipe):  # the few scalar keys the check needs (no YAML module required)
    s = line.split("#")[0].strip()
    if ":" in s:
        k, v = [x.strip() for x in s.split(":", 1)]
        if v: cfg[k] = v
frames, height, width = int(cfg["num_frames"]), int(cfg["height"]), int(cfg["width"])
mp4s = sorted(f for f in os.listdir(out) if f.endswith(".mp4"))
assert len(mp4s) == n_prompts, f"expected {n_prompts} MP4s, found {mp4s}"
assert not [f for f in os.listdir(out) if ".tmp" in f], "temporary files left behind"
for i, f in enumerate(mp4s):
    assert f.startswith(f"{i:04d}-"), f"unexpected name {f}"
    info = json.loads(subprocess.check_output(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
         "stream=codec_name,width,height,pix_fmt,nb_read_frames", "-of", "json", os.path.join(out, f)]))
    s = info["streams"][0]
    assert s["codec_name"] == "h264" and s["pix_fmt"] == "yuv420p", s
    assert int(s["nb_read_frames"]) == frames, f"{f}: {s['nb_read_frames']} frames, expected {frames}"
    assert (s["width"], s["height"]) == (width, height), f"{f}: {s['width']}x{s['height']}"
t = json.load(open(os.path.join(out, "timing.json")))
for k in ("recipe", "mesh", "device", "load_seconds", "videos", "vgen", "started_at", "finished_at", "wall_seconds",
          "hosts"):
    assert k in t, f"timing.json lacks {k}"
import re, time
assert re.fullmatch(r"\d+\.\d+\.\d+", t["vgen"]["version"]) and t["vgen"]["commit"], t["vgen"]
for k in ("started_at", "finished_at"):  # ISO 8601 UTC, in order
    time.strptime(t[k], "%Y-%m-%dT%H:%M:%SZ")
assert t["started_at"] <= t["finished_at"], (t["started_at"], t["finished_at"])
assert t["wall_seconds"] >= max(v["seconds"]["total"] for v in t["videos"]), t["wall_seconds"]
assert isinstance(t["hosts"], list) and len(t["hosts"]) >= 1, t["hosts"]
assert len(t["videos"]) == n_prompts, t["videos"]
for v in t["videos"]:
    assert v["status"] == "ok", v
    assert v["frames"] == frames, v
    assert len(v["seconds"]["steps"]) == int(cfg["num_inference_steps"]), v["seconds"]
print(f"demo: {n_prompts} MP4s of {frames} frames {width}x{height} decode; timing.json ok")
PY

timeout 300 "${mpirun[@]}" -np 4 "$vgen" --recipe recipes/demo-cpu.yaml --out "$out" --set output.skip_existing=true
rc=$?
[ $rc -eq 0 ] || fail "rerun exited with $rc"
python3 - "$out" <<'PY' || exit 1
import json, os, sys
t = json.load(open(os.path.join(sys.argv[1], "timing.json")))
st = [v["status"] for v in t["videos"]]
assert st and all(s == "skipped" for s in st), st
print(f"rerun: all {len(st)} videos skipped")
PY
echo PASS
