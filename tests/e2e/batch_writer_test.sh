#!/usr/bin/env bash
# The replica leader's background writer (issue 21 item 5) on the CPU with the tiny model:
#   encode_fail: an encode that fails mid-file (VGEN_INJECT_ENCODE_FAIL) on dp 2 x cfg 2 fails that
#     prompt alone (exit 7, its error in timing.json, no temporary file), and --retry-failed makes it;
#   sigterm: SIGTERM while finished videos wait for a slow writer (VGEN_INJECT_ENCODE_DELAY_MS):
#     exit 130, the waiting videos are written before the final report, every MP4 decodes with its
#     frame count and timing.json matches the directory;
#   sigterm_ranks: the same with SIGTERM sent to both ranks of a dp 2 job under mpirun.
# Usage: batch_writer_test.sh <vgen> <source dir> <case>   (case: encode_fail|sigterm|sigterm_ranks)
set -u
VGEN=$1; SRC=$2; CASE=$3
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" writer
common=(--recipe "$SRC/recipes/demo-cpu.yaml" --set model="$SRC/tests/golden/wan21-tiny" --set generation.height=16
        --set generation.width=16 --set generation.num_frames=5 --set generation.num_inference_steps=2
        --set generation.max_sequence_length=8)
finished_mp4s() { ls "$1" 2> /dev/null | grep '\.mp4$' | grep -vc '\.tmp\.'; }

# timing.json against the directory: every ok entry's MP4 exists and decodes with its frame count
# (ffprobe), every MP4 is an ok entry's, the seconds of a video nest in its total, no temporaries.
# Usage: check_outputs <out dir> [expected complete: true|false]
check_outputs() {
  python3 - "$1" "$2" <<'PY'
import json, os, subprocess, sys
out, complete = sys.argv[1], sys.argv[2] == "true"
d = json.load(open(os.path.join(out, "timing.json")))
assert d["complete"] is complete, d["complete"]
tmp = [f for f in os.listdir(out) if ".tmp" in f]
assert not tmp, f"temporary files left: {tmp}"
ok = [v for v in d["videos"] if v["status"] == "ok"]
mp4 = sorted(f for f in os.listdir(out) if f.endswith(".mp4"))
assert sorted(os.path.basename(v["output"]) for v in ok) == mp4, (mp4, [v["output"] for v in ok])
for v in ok:
    n = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", v["output"]], capture_output=True, text=True)
    assert n.returncode == 0 and n.stdout.strip() == str(v["frames"]) == "5", (v["output"], n.stdout, n.stderr)
    s = v["seconds"]
    assert s["mp4_encode"] > 0, v
    parts = s["text_encode"] + s["denoise"] + s["vae_decode"] + s["mp4_encode"]
    assert parts <= s["total"], (v["name"], parts, s)
for v in d["videos"]:
    if v["status"] == "failed":
        assert v["error"] and v["output"] is None, v
print(f"{len(ok)} videos ok and decodable, {len(d['videos']) - len(ok)} other entries")
PY
}

case $CASE in
encode_fail)
  prompts 6 "$W/p.txt"
  VGEN_INJECT_ENCODE_FAIL=2 timeout 300 $MPIRUN -np 4 --oversubscribe "$VGEN" run "${common[@]}" \
    --set parallel_config.dp_size=2 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 \
    --prompts "$W/p.txt" --out "$W/out" > "$W/log" 2>&1
  rc=$?
  [ $rc = 7 ] || { tail -20 "$W/log"; fail "expected exit 7 after an encode failure, got $rc"; }
  check_outputs "$W/out" true || fail "outputs after an encode failure"
  python3 - "$W/out/timing.json" <<'PY' || fail "timing.json after an encode failure"
import json, sys
v = {x["index"]: x for x in json.load(open(sys.argv[1]))["videos"]}
assert sorted(v) == list(range(6)), sorted(v)
assert v[2]["status"] == "failed" and "injected encode failure" in v[2]["error"], v[2]
assert v[2]["seconds"]["mp4_encode"] > 0 and v[2]["frames"] == 5, v[2]
assert all(v[i]["status"] == "ok" for i in (0, 1, 3, 4, 5)), [v[i]["status"] for i in range(6)]
PY
  [ "$(finished_mp4s "$W/out")" = 5 ] || fail "expected 5 MP4s"
  grep -q "prompt 0002-.* failed: .*injected encode failure" "$W/log" || fail "no warning for the failed encode"
  # The failed prompt is made by --retry-failed (the hook is off now).
  timeout 300 $MPIRUN -np 4 --oversubscribe "$VGEN" run "${common[@]}" \
    --set parallel_config.dp_size=2 --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1 \
    --prompts "$W/p.txt" --out "$W/out" --retry-failed > "$W/log2" 2>&1 || { tail -20 "$W/log2"; fail "--retry-failed"; }
  [ "$(finished_mp4s "$W/out")" = 6 ] || fail "--retry-failed should add the failed prompt's video"
  python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['videos']; assert [x['status'] for x in sorted(v, key=lambda x: x['index'])] == ['skipped']*2 + ['ok'] + ['skipped']*3, v" \
    "$W/out/timing.json" || fail "--retry-failed should render only prompt 2"
  ;;
sigterm|sigterm_ranks)
  # Every encode takes at least 0.8 s while a render takes ~10 ms: at the signal one video is being
  # written, one waits and the next is in the main thread's hands.
  prompts 300 "$W/p.txt"
  if [ "$CASE" = sigterm ]; then
    VGEN_INJECT_ENCODE_DELAY_MS=800 "$VGEN" run "${common[@]}" --set parallel_config.cfg_size=1 \
      --set parallel_config.ulysses_size=1 --prompts "$W/p.txt" --out "$W/out" > "$W/log" 2>&1 &
  else
    VGEN_INJECT_ENCODE_DELAY_MS=800 $MPIRUN -np 2 --oversubscribe -x VGEN_INJECT_ENCODE_DELAY_MS "$VGEN" run \
      "${common[@]}" --set parallel_config.dp_size=2 --set parallel_config.cfg_size=1 \
      --set parallel_config.ulysses_size=1 --prompts "$W/p.txt" --out "$W/out" > "$W/log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 300); do [ "$(finished_mp4s "$W/out")" -ge 2 ] && break; sleep 0.1; done
  [ "$(finished_mp4s "$W/out")" -ge 2 ] || { kill -9 $pid; tail -20 "$W/log"; fail "no videos after 30 s"; }
  before=$(finished_mp4s "$W/out")
  if [ "$CASE" = sigterm ]; then
    kill -TERM $pid
  else
    ranks=$(pgrep -P $pid -f "$VGEN")
    [ "$(echo "$ranks" | wc -w)" = 2 ] || { kill -9 $pid; fail "expected 2 rank processes, found: $ranks"; }
    kill -TERM $ranks  # the ranks themselves: mpirun would end them before their final report
  fi
  for _ in $(seq 1 300); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
  kill -0 $pid 2> /dev/null && { kill -9 $pid; fail "still running 30 s after SIGTERM"; }
  wait $pid; rc=$?
  [ $rc = 130 ] || { tail -20 "$W/log"; fail "expected exit 130 after SIGTERM, got $rc"; }
  check_outputs "$W/out" false || { tail -20 "$W/log"; fail "outputs after SIGTERM"; }
  after=$(finished_mp4s "$W/out")
  echo "MP4s: $before at the signal, $after after the drain"
  # Per replica, the video being written at the signal and the one waiting behind it (and the one
  # the main thread was handing over, if any) are written before the final report: without the
  # drain only the first of them would be.
  replicas=1; [ "$CASE" = sigterm_ranks ] && replicas=2
  [ "$after" -ge $((before + 2 * replicas)) ] || fail "the videos waiting for the writer were not written ($before -> $after)"
  # Every video the main threads finished (their progress line) is in the final report with that
  # status: none was lost in the writer's queue.
  python3 - "$W/out/timing.json" "$W/log" <<'PY' || fail "timing.json after SIGTERM"
import json, re, sys
v = json.load(open(sys.argv[1]))["videos"]
assert len({x["index"] for x in v}) == len(v), "an index recorded twice"
bad = [x for x in v if x["status"] == "failed" and "interrupted" not in x["error"]]
assert not bad, bad
done = dict(re.findall(r"^\[r\d+\] video (\S+) (ok|failed) in ", open(sys.argv[2]).read(), re.M))
got = {x["name"]: x["status"] for x in v}
assert done == got, f"finished {sorted(done.items())}, recorded {sorted(got.items())}"
PY
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS: $CASE"
