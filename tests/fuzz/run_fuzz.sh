#!/usr/bin/env bash
# One fuzz target for a fixed budget: fixed seed, fixed number of runs, capped in time (a run the
# cap ends early is the only one that differs between runs); starts from the seed corpus
# tests/fuzz/corpus/<target> and any further seed folders given (new inputs go to a fresh work
# folder, never into the source tree). Fails on any finding: crash, sanitizer report, unexpected
# exception, leak, an input running past 10 s, or memory past 2 GiB; the input is kept under the
# work folder and named in the output (reproduce: <fuzz binary> <that file>).
# Usage: run_fuzz.sh <fuzz binary> <target> <runs> <max seconds> <work dir> [more seed folders...]
set -u
BIN=$1; TARGET=$2; RUNS=$3; SECONDS_MAX=$4; WORK=$5
shift 5
SEEDS=("$@")
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$WORK" && mkdir -p "$WORK/corpus" || exit 1
# Files the target writes per input: in memory where possible, at a path fixed by the work folder.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export VGEN_FUZZ_SCRATCH=/dev/shm/vgen_fuzz_$(printf '%s' "$WORK" | md5sum | cut -c1-16)
else
  export VGEN_FUZZ_SCRATCH=$WORK/scratch
fi
rm -rf "$VGEN_FUZZ_SCRATCH"
trap 'rm -rf "$VGEN_FUZZ_SCRATCH"' EXIT
args=(-seed=1 -runs="$RUNS" -max_total_time="$SECONDS_MAX" -timeout=10 -rss_limit_mb=2048 -max_len=8192
      -reload=0 -print_final_stats=1 -artifact_prefix="$WORK/")
[ -f "$HERE/dict/$TARGET.dict" ] && args+=(-dict="$HERE/dict/$TARGET.dict")
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Without address randomisation the run is reproducible: the same inputs, coverage and corpus on
# every run (pointer-keyed containers in the parsers otherwise move the coverage between runs).
norandom=()
setarch "$(uname -m)" -R true 2>/dev/null && norandom=(setarch "$(uname -m)" -R)
"${norandom[@]}" "$BIN" "${args[@]}" "$WORK/corpus" "$HERE/corpus/$TARGET" "${SEEDS[@]}" > "$WORK/log" 2>&1
rc=$?
grep -E "^#[0-9]+ +DONE|^Done|stat::number_of_executed_units|stat::peak_rss_mb" "$WORK/log"
found=$(ls "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$WORK"/oom-* 2>/dev/null)
if [ $rc -ne 0 ] || [ -n "$found" ]; then
  tail -60 "$WORK/log"
  echo "FAIL: fuzz_$TARGET exited $rc; input: ${found:-none saved}"
  exit 1
fi
echo "fuzz_$TARGET: no finding"
