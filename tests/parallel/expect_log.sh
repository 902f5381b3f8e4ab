#!/usr/bin/env bash
# expect_log.sh PATTERN CMD...: runs CMD (output passed through) and fails unless it succeeds and its
# output holds PATTERN (grep -E): a run that must take a given path says so in its log.
pattern=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
[ "$rc" -ne 0 ] && exit "$rc"
if ! grep -Eq "$pattern" "$out"; then
  echo "expect_log.sh: '$pattern' not in the output" >&2
  exit 1
fi
exit 0
