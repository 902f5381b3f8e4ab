#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test layer that needs no GPU and is not a benchmark:
#   ctest -LE 'gpu|bench'  (unit, golden, parallel, e2e). Exits non-zero when a test fails.
# The include layers (scripts/check_layers.py) are checked first: a second, before any compiling.
# VGEN_TEST_JOBS (default 2) sets ctest's parallelism, VGEN_TEST_TIMEOUT (default 900 s) the
# per-test limit; extra arguments go to ctest (e.g. -L unit, -R recipe).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
python3 scripts/check_layers.py
bash scripts/build.sh
BUILD="${VGEN_BUILD_DIR:-$ROOT/build}"
cd "$BUILD"
ctest --output-on-failure -LE 'gpu|bench' --timeout "${VGEN_TEST_TIMEOUT:-900}" -j"${VGEN_TEST_JOBS:-2}" "$@"
