#!/usr/bin/env bash
# DiT on the GPU machine, from the repository root, in one call: configure + build (CUDA, no FFmpeg),
# the gpu tests of the DiT kernels and the device forward, `vgen golden --case dit_forward` on the
# device (fp32 and bf16; on two GPUs also ulysses 2 / ring 2 / attn2d 1x2 / cfg 2), the
# Wan2.1-14B forward benchmark (vgen_dit_bench) and the diffusers peer on the same GPU, then a
# short table. Logs go to <build>/dit_bench_logs; $OUT receives three files: summary.txt,
# dit_bench.jsonl and dit_bench_logs.tgz. The JSON lines are also copied to
# results/dit_bench_<UTC stamp>.jsonl. scripts/bench/gpu_suite.sh runs the same measurements as its
# suites tests, golden, dit and peer, with one record format for all of them.
#
# Copy with the working tree: .dev/deps (GoogleTest/OpenBLAS/nlohmann copies for
# scripts/device/gpu_check.sh) and .whl (the diffusers wheel for the peer).
# Usage: scripts/bench/run_dit_bench.sh [stages...]   stages: build test golden bench peer multi (default: all)
# Environment: VGEN_GPU_BUILD (default build-gpu), JOBS, SHAPES (default 480p,720p), LAYERS (default 40),
#   MODES (two-GPU benchmark modes, default "ulysses ring attn2d cfg"),
#   BUDGET_S (seconds this script may use, default 570: later stages are skipped, and said so, when
#   too little is left), VGEN_COMMIT (recorded in the JSON when the checkout has no .git).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
OUTDIR=$BUILD/dit_bench_logs
JOBS=${JOBS:-$(nproc)}
SHAPES=${SHAPES:-480p,720p}
LAYERS=${LAYERS:-40}
MODES=${MODES:-ulysses ring attn2d cfg}
BUDGET_S=${BUDGET_S:-570}
STAGES=${*:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Carried libraries (scripts/device/pack_deps.sh) must also be found when the binaries run.
[ -d "$ROOT/.dev/deps/openblas/lib" ] && export LD_LIBRARY_PATH=$ROOT/.dev/deps/openblas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VGEN_COMMIT=${VGEN_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR" "$ROOT/results"
T0=$(date +%s)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUTDIR/dit_bench.jsonl
SUMMARY=$OUTDIR/summary.txt
: > "$SUMMARY"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
say() { echo "[dit_bench] $*" | tee -a "$SUMMARY"; }
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
want() { [[ " $STAGES " == *" all "* || " $STAGES " == *" $1 "* ]]; }
# enough SECONDS: true when at least SECONDS of the budget are left (else says the stage is skipped)
enough() {
  if [ "$(left)" -lt "$1" ]; then say "SKIPPED $2: $(left) s of the budget left, needs ~$1 s"; return 1; fi
  return 0
}
# Early exits still hand the logs back.
fail_exit() {
  if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$SUMMARY" "$OUT/summary.txt"; tar czf "$OUT/dit_bench_logs.tgz" -C "$OUTDIR" . 2>/dev/null; fi
  exit "$1"
}
say "start $STAMP, $NGPU GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $VGEN_COMMIT"

BIN=$BUILD/tests/vgen_dit_bench
if want build; then
  if ! VGEN_GPU_BUILD=$BUILD OUT=$OUTDIR "$ROOT/scripts/device/gpu_check.sh" --configure-only > "$OUTDIR/configure.log" 2>&1; then
    tail -20 "$OUTDIR/configure.log"; say "configure failed (configure.log)"; fail_exit 3
  fi
  T1=$(date +%s)
  if ! cmake --build "$BUILD" -j "$JOBS" --target vgen_dit_bench test_dit_kernels_gpu test_dit_forward_gpu \
       test_attention_gpu device_attention_test vgen > "$OUTDIR/build.log" 2>&1; then
    grep -E "error" "$OUTDIR/build.log" | head -30; say "build failed (build.log)"; fail_exit 3
  fi
  say "build $(( $(date +%s) - T1 )) s, warnings: $(grep -c 'warning' "$OUTDIR/build.log")"
fi

TEST_RC=0
if want test && enough 90 "gpu tests"; then
  # device_attention_* (two ranks, NCCL) report as skipped on a one-GPU machine.
  ctest --test-dir "$BUILD" -R '^(test_dit_kernels_gpu|test_dit_forward_gpu|test_attention_gpu|device_attention_.*)$' \
    --output-on-failure --timeout 300 > "$OUTDIR/ctest.log" 2>&1
  TEST_RC=$?
  grep -E "tests passed|Passed|Failed|SKIPPED|\*\*\*" "$OUTDIR/ctest.log" | tee -a "$SUMMARY"
  "$BUILD/tests/test_dit_forward_gpu" 2>&1 | grep -E "^\[dit gpu" | tee -a "$SUMMARY"
fi

GOLDEN_RC=0
golden() {  # golden NAME NP SETS...
  local name=$1 np=$2; shift 2
  local sets=() s
  for s in "$@"; do sets+=(--set "$s"); done
  local cmd=("$BUILD/bin/vgen" golden --fixtures "$ROOT/tests/golden" --case dit_forward "${sets[@]}")
  [ "$np" -gt 1 ] && cmd=(mpirun -np "$np" --bind-to none "${cmd[@]}")
  if "${cmd[@]}" > "$OUTDIR/golden_$name.log" 2>&1; then say "golden dit_forward $name: PASS"
  else GOLDEN_RC=1; say "golden dit_forward $name: FAIL (golden_$name.log)"; tail -5 "$OUTDIR/golden_$name.log"; fi
  grep -E "rel-l2" "$OUTDIR/golden_$name.log" | head -4 | sed 's/^/    /' | tee -a "$SUMMARY"
}
if want golden && enough 60 "golden"; then
  golden cuda_fp32 1 device=cuda precision=fp32
  golden cuda_bf16 1 device=cuda precision=bf16
  if [ "$NGPU" -ge 2 ]; then
    golden ulysses2_bf16 2 device=cuda precision=bf16 parallel_config.ulysses_size=2
    golden ring2_fp32 2 device=cuda precision=fp32 parallel_config.ring_size=2
    golden attn2d_1x2_bf16 2 device=cuda precision=bf16 "parallel_config.attn2d_size=[1,2]"
    golden cfg2_bf16 2 device=cuda precision=bf16 parallel_config.cfg_size=2
  fi
fi

if want bench && enough 150 "vgen benchmark"; then
  # 720p needs ~6 forwards of ~10-15 s each; skip it when the budget cannot hold it.
  shapes=$SHAPES
  if [[ "$shapes" == *720p* ]] && [ "$(left)" -lt 300 ]; then
    shapes=${shapes//,720p/}; shapes=${shapes//720p,/}
    say "SKIPPED 720p in the vgen benchmark: $(left) s left"
  fi
  timeout $(( $(left) - 20 )) "$BIN" --shapes "$shapes" --layers "$LAYERS" --out "$JSONL" --tag single 2>&1 |
    tee "$OUTDIR/bench_single.log" | grep '^#' | tee -a "$SUMMARY"
fi

if want peer && enough 120 "diffusers peer"; then
  WHL=$(ls "$ROOT"/.whl/diffusers-*.whl 2>/dev/null | head -1)
  if [ -z "$WHL" ]; then
    say "SKIPPED peer: no .whl/diffusers-*.whl (carry .whl)"
  else
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL" \
      > "$OUTDIR/peer_install.log" 2>&1 || say "pip install of $WHL failed (peer_install.log)"
    peer=()
    [[ "$SHAPES" == *480p* ]] && peer+=(dit480)
    [[ "$SHAPES" == *720p* ]] && [ "$(left)" -gt 200 ] && peer+=(dit720)
    PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 timeout $(( $(left) - 10 )) \
      python3 "$ROOT/scripts/bench/peer/diffusers_wan_bench.py" "${peer[@]}" > "$OUTDIR/peer.log" 2>&1
    grep '^{' "$OUTDIR/peer.log" | sed 's/^{/{"tag": "peer", /' >> "$JSONL"
    grep -c '"dit_forward"' "$OUTDIR/peer.log" > /dev/null || { say "peer produced no measurement:"; tail -5 "$OUTDIR/peer.log"; }
  fi
fi

if want multi && [ "$NGPU" -ge 2 ]; then
  for mode in $MODES; do
    enough 120 "two-GPU benchmark $mode" || break
    timeout $(( $(left) - 20 )) mpirun -np 2 --bind-to none "$BIN" --mode "$mode" --shapes "$SHAPES" \
      --layers "$LAYERS" --no-profile --out "$JSONL" --tag "2gpu-$mode" 2>&1 |
      tee "$OUTDIR/bench_$mode.log" | grep '^#' | tee -a "$SUMMARY"
  done
fi

[ -s "$JSONL" ] && cp "$JSONL" "$ROOT/results/dit_bench_$STAMP.jsonl"
finish() {
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$SUMMARY" "$OUT/summary.txt"
    [ -s "$JSONL" ] && cp "$JSONL" "$OUT/dit_bench.jsonl"
    tar czf "$OUT/dit_bench_logs.tgz" -C "$OUTDIR" . 2>/dev/null
  fi
}

# The table: vgen vs peer per shape (peer numbers of this run, else the recorded ones in
# /work/shared/device/README.md: 3.18 s at 480p, 11.93 s at 720p).
python3 - "$JSONL" <<'EOF' | tee -a "$SUMMARY"
import json, sys
rows = []
try:
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
except FileNotFoundError:
    pass
# Recorded peer times (shared/device/README.md), used where this run measured none.
recorded = {("single", 480): 3.18, ("single", 720): 11.93, ("ulysses", 480): 1.84, ("ulysses", 720): 6.35,
            ("ring", 480): 1.86, ("ring", 720): 6.38}
target = {480: 0.90, 720: 0.85}
peer = {("single", r["height"]): r["seconds"] for r in rows
        if r.get("impl", "").startswith("diffusers") and "seconds" in r}
print("\n%-6s %-8s %-6s %9s %9s %7s %6s  %s" % ("shape", "mode", "layers", "vgen s", "peer s", "ratio", "target",
                                                 "profiled phases: s (TFLOP/s)"))
for r in rows:
    if r.get("impl") != "vgen":
        continue
    h, mode = r["height"], r["mode"]
    # cfg 2: both streams in one measurement, shown per forward (throughput) against one peer forward
    sec = r["seconds"] / r.get("forwards_per_measurement", 1)
    key = ("single", h) if mode == "cfg" else (mode, h)
    p, src = peer.get(key), ""
    if p is None and key in recorded:
        p, src = recorded[key], "*"
    ok = p and r["layers"] == 40
    ph = r.get("phases_seconds")
    phs = ("gemm %.2f (%.0f)  self-attn %.2f (%.0f)  cross %.2f  other %.2f" % (
        ph["gemm"], r["gemm_tflops"], ph["self_attention"], r["self_attention_tflops"], ph["cross_attention"],
        ph["other"])) if ph else ""
    print("%-6s %-8s %-6d %9.3f %9s %7s %6s  %s" % ("%dp" % h, mode, r["layers"], sec,
          ("%.2f%s" % (p, src)) if ok else "-", ("%.3f" % (sec / p)) if ok else "-",
          "%.2f" % target[h] if mode == "single" and h in target else "-", phs))
print("(* peer time recorded in shared/device/README.md, not measured in this run; cfg: time per forward with the"
      " two CFG forwards on two GPUs; target = issue 7's ratio for one GPU)")
EOF
say "tests rc $TEST_RC, golden rc $GOLDEN_RC, total $(( $(date +%s) - T0 )) s; logs in $OUTDIR"
finish
exit $(( TEST_RC != 0 || GOLDEN_RC != 0 ))
