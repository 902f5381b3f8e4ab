#!/usr/bin/env bash
# A full disk names its reason: the output directory on a tmpfs that is full, one rank (no MPI
# launcher inside the mount namespace). Every write vgen makes there (the video, its sidecar,
# timing.json) fails with ENOSPC, and the message that ends the job says "No space left on device".
# The tmpfs is mounted in a private mount namespace (unshare -rm, or unshare -m as root), so the
# test needs no privileges beyond user namespaces; where neither works it reports skipped (77).
# FREE_PAGES (second argument, default 0): 4 KiB pages left free, so that the preflight's write
# probe passes and the videos' writes fail in the batch.
# usage: full_disk.sh VGEN_BIN SOURCE_DIR [FREE_PAGES]
set -uo pipefail
vgen=$1 src=$2 free=${3:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/disk"
cat > "$work/inner.sh" <<'INNER'
set -uo pipefail
disk=$1 vgen=$2 src=$3 free=$4
mount -t tmpfs -o size=256k tmpfs "$disk" || exit 77
mkdir -p "$disk/out"
dd if=/dev/zero of="$disk/filler" bs=4k 2>/dev/null  # until the disk is full
[ "$free" -gt 0 ] && truncate -s -$((free * 4096)) "$disk/filler"
df -k "$disk" | tail -1
cd "$src" || exit 2
timeout 120 "$vgen" run --recipe recipes/demo-cpu.yaml --set "output.dir=$disk/out" \
  --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1 \
  --set generation.num_inference_steps=1
rc=$?
echo "left in the output directory: $(cd "$disk/out" && ls -A | tr '\n' ' ')"
exit $rc
INNER
run_inner() { "$@" bash "$work/inner.sh" "$work/disk" "$vgen" "$src" "$free" > "$work/log" 2>&1; }
if run_inner unshare -rm; rc=$?; [ $rc -eq 77 ] || grep -q "unshare failed" "$work/log"; then
  [ "$(id -u)" -eq 0 ] && { run_inner unshare -m; rc=$?; }
fi
cat "$work/log"
echo "--- full disk: exit code $rc"
if [ $rc -eq 77 ] || grep -q "unshare failed" "$work/log"; then echo "SKIPPED: no private tmpfs mount here"; exit 77; fi
[ $rc -eq 0 ] && { echo "FAIL: vgen succeeded on a full disk"; exit 1; }
[ $rc -eq 124 ] && { echo "FAIL: vgen did not finish within 120 s"; exit 1; }
grep -q "No space left on device" "$work/log" || { echo "FAIL: no 'No space left on device' in the output"; exit 1; }
# Nothing half-written stays behind: no temporary file, no video without its sidecar.
grep "^left in the output directory:" "$work/log" | grep -q "\.tmp\." && { echo "FAIL: a temporary file was left"; exit 1; }
# The message that ends the job names the file and the OS's reason: the preflight's probe of the
# output directory (full before the job), else timing.json (full in the batch).
want="is not writable: No space left on device"
[ "$free" -gt 0 ] && want="timing.json: No space left on device"
grep -qF -- "$want" "$work/log" || { echo "FAIL: no '$want' in the output"; exit 1; }
echo PASS
