#!/usr/bin/env bash
# Batch behaviour on the CPU with the tiny model (issue 8): dp 2 × cfg 2 renders every prompt once,
# resume renders only missing videos, an invalid JSONL line fails alone, a killed rank ends the job
# within 60 s, --retry-failed, and resident memory stays flat over 200 videos.
# dwdp: the same batch with the DiT blocks shared over all 4 ranks (DWDP on the CPU) gives the same
# latents for every prompt as without.
# fbcache: the first-block cache takes one rank's decisions on cfg 2 x ulysses 2 and on ring 2; and
# vgen compare on those outputs.
# profile: VGEN_PROFILE_STEPS=1 logs one split line per denoising step (and none without it).
# Usage: batch_test.sh <vgen> <source dir> <case>   (case: dp|resume|jsonl|kill|signal|memory|dwdp|fbcache|profile)
set -u
VGEN=$1; SRC=$2; CASE=$3
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" batch
common=(--set model="$SRC/tests/golden/wan21-tiny" --set generation.height=16 --set generation.width=16
        --set generation.num_frames=5 --set generation.num_inference_steps=2 --set generation.max_sequence_length=8)
count_status() {  # timing.json status → count
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(v['status']==sys.argv[2] for v in d['videos']))" "$1" "$2"
}

case $CASE in
profile)
  prompts 2 "$W/p.txt"
  for v in 1 0; do
    VGEN_PROFILE_STEPS=$v timeout 120 "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --prompts "$W/p.txt" \
      --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1 --out "$W/p$v" > "$W/log_p$v" 2>&1 \
      || { tail -20 "$W/log_p$v"; fail "run with VGEN_PROFILE_STEPS=$v exited non-zero"; }
  done
  n=$(grep -cE "step [12]/2: [0-9.]+ s = forwards [0-9.]+ s \(GPU ops [0-9.]+ s: no device model; the rest [0-9.-]+ s\) \+ scheduler [0-9.]+ s" "$W/log_p1")
  [ "$n" = 4 ] || { cat "$W/log_p1"; fail "expected 4 step split lines (2 videos x 2 steps), got $n"; }
  ! grep -q "= forwards" "$W/log_p0" || fail "a step split line without VGEN_PROFILE_STEPS"
  echo "profile: 4 step lines with VGEN_PROFILE_STEPS=1, none without"
  ;;
fbcache)
  # The first-block cache decides alike on every mesh: the same skips per video as one rank (from
  # timing.json), some but not all forwards skipped, and the same latents within the parallel
  # tolerance (one rank against cfg 2 x ulysses 2 on 4 processes, and ring 2 on 2). 48x48x9 makes
  # 27 tokens, so the last sequence rank holds a pad row.
  prompts 3 "$W/p.txt"
  fb=(--set model="$SRC/tests/golden/wan21-tiny" --set generation.height=48 --set generation.width=48
      --set generation.num_frames=9 --set generation.num_inference_steps=8 --set generation.max_sequence_length=8
      --set cache_config.first_block_threshold=0.1 --set output.save_tensors=true --prompts "$W/p.txt")
  run_fb() {  # name np parallel sets...
    local name=$1 np=$2; shift 2
    timeout 300 $MPIRUN -np "$np" --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${fb[@]}" \
      --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1 "$@" --out "$W/$name" > "$W/log_$name" 2>&1 \
      || { tail -20 "$W/log_$name"; fail "$name run exited non-zero"; }
  }
  run_fb one 1
  run_fb cfg2_u2 4 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=2
  run_fb ring2 2 --set parallel_config.ring_size=2
  grep -q "first-block cache: .* forwards skipped" "$W/log_one" || fail "no first-block cache line in the log"
  python3 - "$W" <<'PY' || fail "first-block cache across meshes"
import json, math, os, sys
sys.path.insert(0, os.environ["E2E_DIR"])
from e2e_check import latents
w = sys.argv[1]
def videos(run):
    return {v["name"]: v for v in json.load(open(os.path.join(w, run, "timing.json")))["videos"]}
one = videos("one")
assert len(one) == 3 and all(v["status"] == "ok" for v in one.values()), one
assert any(0 < v["first_block_cache"]["hits"] < v["first_block_cache"]["forwards"] for v in one.values()), one
for run in ("cfg2_u2", "ring2"):
    got = videos(run)
    for name, v in one.items():
        assert got[name]["first_block_cache"] == v["first_block_cache"], (run, name, got[name], v)
        a, b = latents(os.path.join(w, run, name + ".safetensors")), latents(os.path.join(w, "one", name + ".safetensors"))
        num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))); den = math.sqrt(sum(y * y for y in b))
        assert num <= 1e-4 * den, (run, name, num / den)
print("first-block cache: same decisions and latents on every mesh")
PY
  # vgen compare on the same outputs: the mesh within the bound (exit 0, JSON), the cache against a
  # render without it (finite PSNR, not identical; beyond a bound: exit 10), and a video missing on
  # one side (exit 10).
  "$VGEN" compare "$W/one" "$W/cfg2_u2" --max-rel-l2 1e-4 --json "$W/cmp_mesh.json" > "$W/log_cmp" 2>&1 \
    || { cat "$W/log_cmp"; fail "vgen compare one cfg2_u2 exited non-zero"; }
  run_fb off 1 --set cache_config.first_block_threshold=0
  "$VGEN" compare "$W/off" "$W/one" --json "$W/cmp_cache.json" > "$W/log_cmp2" 2>&1 \
    || { cat "$W/log_cmp2"; fail "vgen compare off one exited non-zero"; }
  "$VGEN" compare "$W/off" "$W/one" --min-psnr 200 > "$W/log_cmp4" 2>&1; rc=$?
  [ $rc -eq 10 ] || { cat "$W/log_cmp4"; fail "vgen compare beyond --min-psnr: exit $rc, expected 10"; }
  grep -q " over$" "$W/log_cmp4" || fail "vgen compare did not mark the video beyond the bound"
  mkdir "$W/partial" && cp "$W"/one/0000-*.safetensors "$W"/one/0001-*.safetensors "$W/partial/"
  "$VGEN" compare "$W/one" "$W/partial" > "$W/log_cmp3" 2>&1; rc=$?
  [ $rc -eq 10 ] || { cat "$W/log_cmp3"; fail "vgen compare with a missing video: exit $rc, expected 10"; }
  grep -q "only_in_a" "$W/log_cmp3" || fail "vgen compare did not name the missing video"
  python3 - "$W" <<'PY' || fail "vgen compare results"
import json, math, os, sys
w = sys.argv[1]
mesh = json.load(open(os.path.join(w, "cmp_mesh.json")))
assert mesh["compared"] == 3 and mesh["failed"] == 0, mesh
assert all(v["status"] == "ok" and v["latents_rel_l2"] <= 1e-4 for v in mesh["videos"]), mesh
cache = json.load(open(os.path.join(w, "cmp_cache.json")))
assert cache["compared"] == 3 and cache["failed"] == 0, cache
# A video with cut forwards differs from the uncached render, by a finite PSNR; one without is identical.
hits = {v["name"]: v["first_block_cache"]["hits"] for v in json.load(open(os.path.join(w, "one", "timing.json")))["videos"]}
assert any(hits.values()), hits
for v in cache["videos"]:
    if hits[v["name"]] > 0:
        assert v["video_psnr_db"] is not None and 0 < v["video_psnr_db"] < 200 and v["latents_rel_l2"] > 0, v
    else:
        assert v["identical"], v
print("vgen compare: mesh rel-L2 max %.2e; cache 0.1 against none: PSNR %s dB" % (
    max(v["latents_rel_l2"] for v in mesh["videos"]), [v["video_psnr_db"] for v in cache["videos"]]))
PY
  ;;
dwdp)
  prompts 8 "$W/p.txt"
  for d in 1 4; do
    timeout 300 $MPIRUN -np 4 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
      --set parallel_config.dp_size=2 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 \
      --set parallel_config.dwdp_size=$d --set output.save_tensors=true --prompts "$W/p.txt" --out "$W/out$d" \
      > "$W/log$d" 2>&1 || { tail -20 "$W/log$d"; fail "dwdp_size $d run exited non-zero"; }
  done
  grep -q "DWDP (host)" "$W/log4" || fail "the dwdp_size 4 run did not share the blocks"
  n=$(ls "$W/out4"/*.safetensors | wc -l); [ "$n" = 8 ] || fail "expected 8 tensor files, found $n"
  for f in "$W/out1"/*.safetensors; do
    cmp -s "$f" "$W/out4/$(basename "$f")" || fail "$(basename "$f") differs with DWDP"
  done
  ;;
dp)
  prompts 40 "$W/p.txt"
  timeout 300 $MPIRUN -np 4 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --set parallel_config.dp_size=2 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 \
    --prompts "$W/p.txt" --out "$W/out" > "$W/log" 2>&1 || { tail -20 "$W/log"; fail "dp run exited non-zero"; }
  n=$(ls "$W/out"/*.mp4 | wc -l); [ "$n" = 40 ] || fail "expected 40 MP4s, found $n"
  python3 - "$W/out/timing.json" <<'PY' || fail "timing.json check"
import json, sys
d = json.load(open(sys.argv[1])); v = d["videos"]
idx = sorted(x["index"] for x in v)
assert idx == list(range(40)), idx
assert all(x["status"] == "ok" for x in v), [x for x in v if x["status"] != "ok"]
assert d["mesh"]["dp"] == 2
PY
  # Both replicas took work from the dynamic queue.
  grep -q "^\[r0\] video .* ok" "$W/log" && grep -q "^\[r2\] video .* ok" "$W/log" || fail "one replica rendered nothing"
  ;;
resume)
  prompts 6 "$W/p.txt"
  "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --set output.skip_existing=true --prompts "$W/p.txt" --out "$W/out" > "$W/log1" 2>&1 \
    || fail "first run"
  rm "$W/out"/0001-*.mp4 "$W/out"/0004-*.mp4
  touch "$W/out/0002-stale.mp4.tmp.123"
  echo keep > "$W/out/notes.tmp.txt"  # a user's file: not one of vgen's temporaries
  "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --set output.skip_existing=true --prompts "$W/p.txt" --out "$W/out" > "$W/log2" 2>&1 \
    || fail "second run"
  [ "$(count_status "$W/out/timing.json" ok)" = 2 ] || fail "rerun should render exactly the 2 missing videos"
  [ "$(count_status "$W/out/timing.json" skipped)" = 4 ] || fail "rerun should skip 4 videos"
  [ ! -e "$W/out/0002-stale.mp4.tmp.123" ] || fail "stale temporary file left behind"
  [ -e "$W/out/notes.tmp.txt" ] || fail "a user's file whose name contains .tmp was removed"
  [ "$(ls "$W/out"/*.mp4 | wc -l)" = 6 ] || fail "expected 6 MP4s"
  # Prompts whose stems do not change with their text (non-ASCII slugs to "prompt") swap places: the
  # previous timing.json shows both videos were made from the other prompt, so both are made again.
  run_resume() {
    "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --set parallel_config.cfg_size=1 \
      --set parallel_config.ulysses_size=1 --set output.skip_existing=true --prompts "$W/p.txt" --out "$W/out" \
      > "$W/log3" 2>&1 || fail "rerun after editing the prompts"
  }
  sed -i '1s/.*/一只猫在草地上/;2s/.*/一只狗在海边/' "$W/p.txt"
  run_resume
  [ "$(count_status "$W/out/timing.json" ok)" = 2 ] || fail "the two new prompts should be rendered"
  sed -i '1s/.*/一只狗在海边/;2s/.*/一只猫在草地上/' "$W/p.txt"
  run_resume
  [ "$(count_status "$W/out/timing.json" ok)" = 2 ] || fail "swapped prompts under the same stems should be made again"
  [ "$(count_status "$W/out/timing.json" skipped)" = 4 ] || fail "the untouched prompts should be skipped"
  python3 - "$W/out/timing.json" <<'PY' || fail "skipped entries should keep seed, frames, size and output"
import json, sys
v = {x["index"]: x for x in json.load(open(sys.argv[1]))["videos"]}
assert v[0]["prompt"] == "一只狗在海边" and v[0]["status"] == "ok", v[0]
s = v[5]
assert s["status"] == "skipped" and s["seed"] != 0 and s["frames"] == 5 and s["height"] == 16 and s["output"], s
PY
  ;;
jsonl)
  cat > "$W/p.jsonl" <<'J'
{"prompt": "a cat", "seed": 3}
{"prompt": "a dog", "num_frames": "many"}
{"prompt": "a bird", "name": "birdie"}
{"prompt": "a fish", "negative_prompt": "blurry"}
J
  VGEN_INJECT_NAN_PROMPT=3 timeout 300 $MPIRUN -np 2 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" \
    "${common[@]}" --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 --prompts "$W/p.jsonl" \
    --out "$W/out" > "$W/log" 2>&1
  rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log"; fail "expected exit 7 (some prompts failed), got $rc"; }
  python3 - "$W/out/timing.json" <<'PY' || fail "timing.json check"
import json, sys
v = {x["index"]: x for x in json.load(open(sys.argv[1]))["videos"]}
assert v[0]["status"] == "ok" and v[0]["seed"] == 3, v[0]
assert v[1]["status"] == "failed" and "num_frames" in v[1]["error"], v[1]
assert v[2]["status"] == "ok" and v[2]["name"].endswith("birdie"), v[2]
assert v[3]["status"] == "failed" and "NaN" in v[3]["error"], v[3]
PY
  [ "$(ls "$W/out"/*.mp4 | wc -l)" = 2 ] || fail "expected 2 MP4s"
  # --retry-failed renders exactly the two failed prompts again (the NaN hook is off now).
  timeout 300 $MPIRUN -np 2 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 --prompts "$W/p.jsonl" --out "$W/out" \
    --retry-failed > "$W/log2" 2>&1
  [ "$(count_status "$W/out/timing.json" skipped)" = 2 ] || fail "--retry-failed should skip the 2 good prompts"
  [ "$(ls "$W/out"/*.mp4 | wc -l)" = 3 ] || fail "--retry-failed should add the NaN prompt's video"
  ;;
kill)
  # Long enough that the job is still running when the first MP4 appears (the tiny model renders a
  # 16x16 video in ~10 ms: 40 of them could finish before the kill).
  prompts 300 "$W/p.txt"
  $MPIRUN -np 4 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" \
    --set parallel_config.dp_size=2 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 \
    --set generation.num_inference_steps=40 --set generation.height=64 --prompts "$W/p.txt" --out "$W/out" \
    > "$W/log" 2>&1 &
  mp=$!
  for _ in $(seq 1 100); do finished_videos "$W/out" | grep -q . && break; sleep 0.2; done
  victim=$(pgrep -P $mp -f vgen | sed -n 2p)
  [ -n "$victim" ] || { pgrep -a -P $mp; tail -20 "$W/log"; fail "no rank process found"; }
  t0=$(date +%s); kill -9 "$victim"
  for _ in $(seq 1 600); do kill -0 $mp 2> /dev/null || break; sleep 0.1; done
  kill -0 $mp 2> /dev/null && { kill -9 $mp; fail "job still running 60 s after a rank was killed"; }
  wait $mp; rc=$?; dt=$(( $(date +%s) - t0 ))
  [ $rc != 0 ] || fail "job exited 0 after a rank was killed"
  echo "job ended with $rc ${dt}s after the kill"
  [ $dt -le 60 ] || fail "took ${dt}s"
  ls "$W/out" | grep -q '\.tmp' && echo "note: temporary file left (removed by the next run)"
  ;;
signal)
  prompts 300 "$W/p.txt"
  "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --set generation.num_inference_steps=40 --set generation.height=64 --prompts "$W/p.txt" --out "$W/out" \
    > "$W/log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do finished_videos "$W/out" | grep -q . && break; sleep 0.1; done
  kill -TERM $pid; wait $pid; rc=$?
  [ $rc = 130 ] || { tail -5 "$W/log"; fail "expected exit 130 after SIGTERM, got $rc"; }
  python3 - "$W/out/timing.json" <<'PY' || fail "timing.json after SIGTERM"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is False
assert any(v["status"] == "ok" for v in d["videos"])
PY
  ls "$W/out" | grep -q '\.tmp' && fail "temporary file left after SIGTERM"
  ;;
memory)
  prompts 200 "$W/p.txt"
  "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" "${common[@]}" --set parallel_config.cfg_size=1 \
    --set parallel_config.ulysses_size=1 --prompts "$W/p.txt" --out "$W/out" > "$W/log" 2>&1 || fail "200-video run"
  python3 - "$W/out/timing.json" <<'PY' || fail "memory growth"
import json, sys
v = sorted(json.load(open(sys.argv[1]))["videos"], key=lambda x: x["index"])
assert len(v) == 200 and all(x["status"] == "ok" for x in v)
a, b = v[19]["rss_bytes"], v[199]["rss_bytes"]
g = (b - a) / a
print(f"resident memory: video 20 {a/2**20:.1f} MiB, video 200 {b/2**20:.1f} MiB, growth {100*g:.2f}%")
assert g < 0.05, g
PY
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS: $CASE"
