#!/usr/bin/env bash
# Resume by fingerprint (docs/batch.md "Resume") on 2 ranks with the tiny model: a rerun reuses a
# video only when its sidecar <stem>.vgen.json holds this run's fingerprint and its file is whole.
#   reuse: unchanged rerun (dp 2) reuses both videos, files untouched, timing.json says so;
#   setting: a changed guidance_scale renders both again;
#   seed: a changed seed on one JSONL line renders that video alone again;
#   damaged: a 0-byte MP4 and one overwritten with garbage are both rendered again;
#   no_overwrite: --no-overwrite after a setting change exits 5, renders nothing, says so once;
#   sidecar: a video whose sidecar was deleted is rendered again.
# Usage: resume_test.sh <vgen> <source dir> <case>
set -u
VGEN=$1; SRC=$2; CASE=$3
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" resume
OUT="$W/out"
cat > "$W/p.jsonl" <<'J'
{"prompt": "a small red cube turns", "seed": 3}
{"prompt": "a small blue sphere rolls", "seed": 4}
J
mesh=(--set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=1)
run() {  # log name, extra arguments...; sets rc
  local log=$1; shift
  timeout 300 $MPIRUN -np 2 --oversubscribe "$VGEN" run --recipe "$SRC/recipes/demo-cpu.yaml" \
    --set model="$SRC/tests/golden/wan21-tiny" --set generation.height=16 --set generation.width=16 \
    --set generation.num_frames=5 --set generation.num_inference_steps=2 --set generation.max_sequence_length=8 \
    --set output.skip_existing=true "${mesh[@]}" --prompts "$W/p.jsonl" --out "$OUT" "$@" > "$W/$log" 2>&1
  rc=$?
}
must_run() {  # log name, extra arguments...
  run "$@"
  [ $rc = 0 ] || { tail -20 "$W/$1"; fail "run $1 exited $rc"; }
}
# The resume line of a log, as "reused again changed no_sidecar damaged new".
tally() {
  sed -n 's/.*resume: \([0-9]*\) reused, \([0-9]*\) rendered again (\([0-9]*\) settings changed, \([0-9]*\) no sidecar, \([0-9]*\) damaged), \([0-9]*\) new.*/\1 \2 \3 \4 \5 \6/p' "$W/$1"
}
expect_tally() {  # log name, expected tally
  local got; got=$(tally "$1")
  [ "$got" = "$2" ] || { grep -v ' step ' "$W/$1" | tail -20; fail "$1: resume tally '$got', expected '$2'"; }
}
# Size, modification time and content of every video and sidecar.
snapshot() { (cd "$OUT" && stat -c '%n %s %y' *.mp4 *.vgen.json && sha256sum *.mp4 *.vgen.json); }
# timing.json's "reused" per index (as "0:true 1:false"), and each fingerprint against its sidecar.
check_timing() {  # expected reused list
  python3 - "$OUT" "$1" <<'PY'
import json, os, sys
out, want = sys.argv[1], sys.argv[2]
d = json.load(open(os.path.join(out, "timing.json")))
assert set(d["fingerprint_inputs"]) == {"vgen_version", "model", "lora", "initial_latents"}, d["fingerprint_inputs"]
v = sorted(d["videos"], key=lambda x: x["index"])
got = " ".join(f"{x['index']}:{str(x['reused']).lower()}" for x in v)
assert got == want, (got, want)
for x in v:
    assert x["status"] == ("skipped" if x["reused"] else "ok"), x
    side = json.load(open(os.path.splitext(x["output"])[0] + ".vgen.json"))
    assert x["fingerprint"] == side["fingerprint"] and len(side["fingerprint"]) == 32, (x, side["fingerprint"])
    assert side["bytes"] == os.path.getsize(x["output"]) and side["video"] == os.path.basename(x["output"]), side
PY
}
fingerprints() { python3 -c "import json,sys; print(' '.join(v['fingerprint'] for v in sorted(json.load(open(sys.argv[1]))['videos'], key=lambda x: x['index'])))" "$OUT/timing.json"; }

[ "$CASE" = reuse ] && mesh=(--set parallel_config.dp_size=2 --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1)
must_run first
expect_tally first "0 0 0 0 0 2"
check_timing "0:false 1:false" || fail "timing.json after the first run"
[ "$(ls "$OUT"/*.vgen.json | wc -l)" = 2 ] || fail "expected 2 sidecars"
before=$(snapshot); fp_before=$(fingerprints)

case $CASE in
reuse)
  sleep 1.1  # a rewrite would show in the modification times
  must_run second
  expect_tally second "2 0 0 0 0 0"
  check_timing "0:true 1:true" || fail "timing.json should mark both videos reused"
  [ "$(snapshot)" = "$before" ] || fail "reused videos or sidecars changed"
  [ "$(fingerprints)" = "$fp_before" ] || fail "fingerprints changed on an unchanged rerun"
  ;;
setting)
  must_run second --set generation.guidance_scale=2
  expect_tally second "0 2 2 0 0 0"
  grep -q "rendered again, settings changed: guidance_scale 5.0 → 2.0" "$W/second" || fail "the log should say what changed"
  check_timing "0:false 1:false" || fail "timing.json after the change"
  [ "$(fingerprints)" != "$fp_before" ] || fail "the fingerprints should change with guidance_scale"
  must_run third --set generation.guidance_scale=2
  expect_tally third "2 0 0 0 0 0"
  ;;
seed)
  sed -i '2s/"seed": 4/"seed": 5/' "$W/p.jsonl"
  must_run second
  expect_tally second "1 1 1 0 0 0"
  grep -q "0001-.*rendered again, settings changed: seed 4 → 5" "$W/second" || fail "the log should name the seed"
  check_timing "0:true 1:false" || fail "exactly the video of the changed line should be rendered"
  ;;
damaged)
  a=$(ls "$OUT"/0000-*.mp4); b=$(ls "$OUT"/0001-*.mp4)
  : > "$a"
  head -c "$(stat -c %s "$b")" /dev/urandom > "$b"
  must_run second
  expect_tally second "0 2 0 0 2 0"
  grep -q "0000-.*rendered again, .*: empty file" "$W/second" || fail "the log should say the MP4 is empty"
  check_timing "0:false 1:false" || fail "both damaged videos should be rendered again"
  for f in "$a" "$b"; do
    n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$f")
    [ "$n" = 5 ] || fail "$f does not decode to 5 frames after the rerun ($n)"
  done
  must_run third
  expect_tally third "2 0 0 0 0 0"
  ;;
no_overwrite)
  timing_before=$(sha256sum < "$OUT/timing.json")
  run second --set generation.guidance_scale=2 --no-overwrite
  [ $rc = 5 ] || { tail -20 "$W/second"; fail "--no-overwrite after a setting change: exit $rc, expected 5"; }
  n=$(grep -c -- "--no-overwrite: 2 existing video(s) would be rendered again" "$W/second")
  [ "$n" = 1 ] || { cat "$W/second"; fail "the refusal should be printed once, found $n"; }
  for s in 0000 0001; do
    grep -q "^\[r0\] error:   $s-.*: settings changed: guidance_scale" "$W/second" || fail "the refusal should list $s"
  done
  ! grep -q "video .* started\| to render, " "$W/second" || fail "the refused job went past its decision"
  [ "$(snapshot)" = "$before" ] || fail "--no-overwrite changed a video or sidecar"
  [ "$(sha256sum < "$OUT/timing.json")" = "$timing_before" ] || fail "--no-overwrite rewrote timing.json"
  # Nothing stale: --no-overwrite runs and reuses.
  must_run third --no-overwrite
  expect_tally third "2 0 0 0 0 0"
  ;;
sidecar)
  rm "$OUT"/0001-*.vgen.json
  must_run second
  expect_tally second "1 1 0 1 0 0"
  grep -q "0001-.*rendered again, no 0001-.*\.vgen\.json" "$W/second" || fail "the log should say the sidecar is missing"
  check_timing "0:true 1:false" || fail "the video without a sidecar should be rendered again"
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS: $CASE"
