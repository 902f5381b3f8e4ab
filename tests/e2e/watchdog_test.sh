#!/usr/bin/env bash
# Watchdog and device-fault behaviour on the CPU with the tiny model, 4 ranks (cfg 2 x ulysses 2; the
# tiny model has 2 heads).
# stop|stop_split: SIGSTOP one rank in the middle of the batch under runtime.collective_timeout_s 20:
#   the job ends with exit 8 within 60 s, the log names the stopped rank with its host and pid, the
#   videos finished before the stop stay (MP4 files and timing.json entries, complete: false).
# stop_default: the same without runtime.collective_timeout_s: the allowance derived from the steps
#   (60 s, the floor) ends the job within 90 s, and every rank's message says it waited on the
#   stopped rank (named with host and pid), never on a rank that was only waiting.
#   stop_split runs every rank as its own node (VGEN_WATCHDOG_SPLIT_NODES), so the state of the
#   stopped rank is read over MPI one-sided instead of the node's shared memory. stop_funneled runs
#   MPI at MPI_THREAD_FUNNELED (VGEN_MPI_THREAD_LEVEL): the watchdog thread makes no MPI call and
#   ends its process with _exit(8), which mpirun turns into the job's exit 8.
# oom_load|oom_step: VGEN_INJECT_OOM on rank 0 at load / on rank 1 in step 1 ends the job with exit 11
#   and a message naming the rank, the phase, the sizes, the GPU's free memory and the plan's estimate.
# cuda_fault: VGEN_INJECT_CUDA_FAULT in step 2 on rank 2 ends the job with exit 8 naming rank 2.
# Usage: watchdog_test.sh <vgen> <source dir> <case>
set -u
VGEN=$1; SRC=$2; CASE=$3
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" watchdog
mp=""
cleanup() {
  [ -n "$mp" ] && kill -0 "$mp" 2> /dev/null && { pkill -CONT -P "$mp"; kill -9 "$mp"; }
  rm -rf "$W"
}
trap cleanup EXIT
prompts 200 "$W/p.txt"
# The demo size (32x48, 9 frames): most of a video's time is its denoising steps, so the stop
# usually lands in the middle of one.
common=(--recipe "$SRC/recipes/demo-cpu.yaml" --set model="$SRC/tests/golden/wan21-tiny"
        --set generation.max_sequence_length=8 --set parallel_config.cfg_size=2
        --set parallel_config.ulysses_size=2 --prompts "$W/p.txt" --out "$W/out")
# Every rank's watchdog message (the lines from "watchdog: waited" to "ending the job") says it waited
# on the stopped rank, with its host and pid, and on no other rank.
waited_on_victim() {  # log, stopped rank, its pid
  python3 - "$@" "$(hostname)" "$(hostname -s)" <<'PY'
import re, sys
log, victim, pid, hosts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
blocks, cur = [], None
for line in open(log, errors="replace"):
    if "watchdog: waited" in line:
        cur = [line]
        blocks.append(cur)
    elif cur is not None and line.startswith("  "):
        cur.append(line)
    else:
        cur = None
assert blocks, "no watchdog message"
for b in blocks:
    text = "".join(b)
    me = re.search(r"\[rank (\d+) on ", text).group(1)
    on = re.findall(r"waiting on rank (\d+) on (\S+) \(pid (\d+)\)", text)
    assert len(on) == 1 and on[0][0] == victim and on[0][2] == pid, f"rank {me} names {on}:\n{text}"
    assert on[0][1] in hosts, f"rank {me}: host {on[0][1]} is not this host {hosts}"
    assert me != victim, text
print(f"{len(blocks)} watchdog message(s), each waiting on rank {victim} on {on[0][1]} (pid {pid})")
PY
}
rank_pid() {  # launcher pid, world rank → the rank's pid
  local p
  for p in $(pgrep -P "$1"); do
    tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}

case $CASE in
stop|stop_split|stop_funneled|stop_default)
  victim_rank=3 limit=60 timeout=(--set runtime.collective_timeout_s=20)
  [ "$CASE" = stop_split ] && { export VGEN_WATCHDOG_SPLIT_NODES=1; victim_rank=1; }
  [ "$CASE" = stop_funneled ] && { export VGEN_MPI_THREAD_LEVEL=funneled; victim_rank=2; }
  [ "$CASE" = stop_default ] && { timeout=(); limit=90; }
  $MPIRUN -np 4 --oversubscribe --bind-to none "$VGEN" run "${common[@]}" --set generation.num_inference_steps=30 \
    "${timeout[@]}" > "$W/log" 2>&1 &
  mp=$!
  for _ in $(seq 1 300); do finished_videos "$W/out" | grep -q . && break; sleep 0.1; done
  finished_videos "$W/out" | grep -q . || { tail -20 "$W/log"; fail "no video finished within 30 s"; }
  victim=$(rank_pid "$mp" "$victim_rank")
  [ -n "$victim" ] || { pgrep -a -P "$mp"; fail "no process of rank $victim_rank found"; }
  t0=$(date +%s); kill -STOP "$victim"
  for _ in $(seq 1 $((limit * 10))); do kill -0 "$mp" 2> /dev/null || break; sleep 0.1; done
  kill -0 "$mp" 2> /dev/null \
    && { tail -20 "$W/log"; fail "job still running $limit s after rank $victim_rank was stopped"; }
  wait "$mp"; rc=$?; mp=""; dt=$(( $(date +%s) - t0 ))
  echo "job ended with $rc ${dt}s after SIGSTOP of rank $victim_rank (pid $victim)"
  [ "$rc" = 8 ] || { tail -30 "$W/log"; fail "expected exit 8, got $rc"; }
  [ "$dt" -le "$limit" ] || fail "took ${dt}s"
  grep -A12 "watchdog: waited" "$W/log" | head -40
  host=$(hostname)
  if [ "$CASE" = stop_default ]; then
    [ "$dt" -ge 50 ] || fail "ended after ${dt}s, before the 60 s allowance could have passed"
    grep -q "watchdog: waited [0-9.]* s in .* longer than the watchdog's allowance of 60 s" "$W/log" \
      || fail "no watchdog line with the derived allowance"
    waited_on_victim "$W/log" "$victim_rank" "$victim" \
      || fail "a rank's message does not say it waited on rank $victim_rank"
  else
    [ "$dt" -ge 15 ] || fail "ended after ${dt}s, before the 20 s timeout could have passed"
    grep -q "watchdog: waited [0-9.]* s in .* longer than runtime.collective_timeout_s = 20 s" "$W/log" \
      || fail "no watchdog timeout line"
  fi
  grep -Eq "rank $victim_rank on [^ ]+ \(pid $victim\): no heartbeat for" "$W/log" \
    || fail "the log does not name rank $victim_rank (pid $victim) as not responding"
  grep -q "rank $victim_rank on $host\|rank $victim_rank on $(hostname -s)" "$W/log" || grep -q "rank $victim_rank on " "$W/log" \
    || fail "the host of rank $victim_rank is not named"
  grep -q "state not readable" "$W/log" && fail "a rank's state was not readable"
  python3 - "$W/out" <<'PY' || fail "finished videos"
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "timing.json")))
assert d["complete"] is False, d.get("complete")
ok = [v for v in d["videos"] if v["status"] == "ok"]
assert ok, "no finished video in timing.json"
for v in ok:
    assert os.path.getsize(v["output"]) > 0, v
mp4 = sorted(f for f in os.listdir(out) if f.endswith(".mp4") and ".tmp." not in f)
assert len(mp4) >= len(ok), (mp4, ok)
print(f"{len(ok)} finished videos kept ({len(mp4)} MP4 files)")
PY
  ;;
oom_load|oom_step)
  if [ "$CASE" = oom_load ]; then hook=load@0; phase="while loading the model"; else hook=step@1; phase="while denoising step 1/"; fi
  VGEN_INJECT_OOM=$hook timeout 120 $MPIRUN -np 4 --oversubscribe --bind-to none "$VGEN" run "${common[@]}" \
    --set generation.num_inference_steps=4 > "$W/log" 2>&1
  rc=$?
  [ "$rc" = 11 ] || { tail -20 "$W/log"; fail "expected exit 11, got $rc"; }
  grep "out of device memory" "$W/log" | head -2
  line=$(grep "out of device memory" "$W/log" | head -1)
  [ -n "$line" ] || fail "no out-of-memory message"
  want_rank=0; [ "$CASE" = oom_step ] && want_rank=1
  for frag in "[rank $want_rank on " "$phase" "injected by VGEN_INJECT_OOM=$hook" " bytes) failed" " free of " \
              "vgen plan estimates " " per GPU for this recipe on 4 rank(s)" "largest item: "; do
    case "$line" in *"$frag"*) ;; *) fail "'$frag' not in: $line" ;; esac
  done
  grep "out of device memory" "$W/log" | grep -vq "\[rank $want_rank on " && fail "a rank other than $want_rank reported the injected OOM"
  ;;
cuda_fault)
  VGEN_INJECT_CUDA_FAULT=step:2@2 timeout 120 $MPIRUN -np 4 --oversubscribe --bind-to none "$VGEN" run "${common[@]}" \
    --set generation.num_inference_steps=4 > "$W/log" 2>&1
  rc=$?
  [ "$rc" = 8 ] || { tail -20 "$W/log"; fail "expected exit 8, got $rc"; }
  grep "sticky CUDA error" "$W/log" | head -2
  grep -q "\[rank 2 on .*sticky CUDA error on .*: cudaErrorIllegalAddress .* in denoising step 2 .*ending the job (exit 8)" "$W/log" \
    || fail "the fault message does not name rank 2, the error and the step"
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "PASS: $CASE"
