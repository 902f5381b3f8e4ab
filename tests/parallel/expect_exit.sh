#!/bin/sh
# Usage: expect_exit.sh EXPECTED_CODE MAX_SECONDS COMMAND...
# Passes when COMMAND exits with EXPECTED_CODE ("nonzero" accepts any failure) within MAX_SECONDS.
expected=$1
max_seconds=$2
shift 2
start=$(date +%s)
"$@"
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "expect_exit: exit code $rc after ${elapsed}s (expected $expected within ${max_seconds}s)"
if [ "$expected" = "nonzero" ]; then
  [ "$rc" -ne 0 ] || exit 1
else
  [ "$rc" -eq "$expected" ] || exit 1
fi
[ "$elapsed" -le "$max_seconds" ] || exit 1
exit 0
