#!/usr/bin/env bash
# VAE on the GPU machine, from the repository root, in one call: configure + build (CUDA, no FFmpeg),
# the gpu tests of the VAE kernels and the device decoder, `vgen golden --case vae_decode` on the
# device (fp32 and bf16; on two GPUs also the parallel VAE over NCCL, width and height split), the
# Wan 2.1 VAE decode benchmark (vgen_vae_bench: 480×832×81 and 720×1280×81, bf16, plus variants while
# the budget lasts) and the diffusers peer on the same GPU, then a short table. Logs and JSON lines go
# to $OUT (or build-gpu/vae_bench_out) and results/.
#
# Copy with the working tree: .dev/deps (cudnn-frontend headers for the cuDNN conv path, and the
# GoogleTest/OpenBLAS/nlohmann copies for scripts/device/gpu_check.sh) and .whl (the diffusers wheel
# for the peer). scripts/bench/gpu_suite.sh vae (and peer) runs the plain decode benchmark with one
# record format for every suite; this script adds the variants and the conv profile.
# Usage: scripts/bench/run_vae_bench.sh [stages...]   stages: build test bench variants peer (default: all)
# Environment: VGEN_GPU_BUILD (default build-gpu), JOBS, SHAPES (default 480p,720p), BUDGET_S (seconds
#   this script may use, default 570; later stages are skipped, and said so, when too little is left),
#   VGEN_COMMIT (recorded in the JSON when the checkout has no .git).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=${VGEN_GPU_BUILD:-$ROOT/build-gpu}
OUTDIR=${OUT:-$BUILD/vae_bench_out}
JOBS=${JOBS:-$(nproc)}
SHAPES=${SHAPES:-480p,720p}
BUDGET_S=${BUDGET_S:-570}
STAGES=${*:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export VGEN_COMMIT=${VGEN_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
mkdir -p "$OUTDIR" "$ROOT/results"
T0=$(date +%s)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JSONL=$OUTDIR/vae_bench.jsonl
SUMMARY=$OUTDIR/summary.txt
: > "$SUMMARY"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say() { echo "[vae_bench] $*" | tee -a "$SUMMARY"; }
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
want() { [[ " $STAGES " == *" all "* || " $STAGES " == *" $1 "* ]]; }
enough() {
  if [ "$(left)" -lt "$1" ]; then say "SKIPPED $2: $(left) s of the budget left, needs ~$1 s"; return 1; fi
  return 0
}
say "start $STAMP, $NGPU GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $VGEN_COMMIT"

BIN=$BUILD/tests/vgen_vae_bench
if want build; then
  if ! VGEN_GPU_BUILD=$BUILD OUT=$OUTDIR "$ROOT/scripts/device/gpu_check.sh" --configure-only > "$OUTDIR/configure.log" 2>&1; then
    tail -20 "$OUTDIR/configure.log"; say "configure failed (configure.log)"; exit 3
  fi
  grep -E "cuDNN|cudnn" "$OUTDIR/gpu_check/configure.txt" 2>/dev/null | sed 's/^/    /' | tee -a "$SUMMARY"
  T1=$(date +%s)
  if ! cmake --build "$BUILD" -j "$JOBS" --target vgen_vae_bench test_vae_kernels_gpu test_vae_decode_gpu vgen \
       > "$OUTDIR/build.log" 2>&1; then
    grep -E "error" "$OUTDIR/build.log" | head -30; say "build failed (build.log)"; exit 3
  fi
  say "build $(( $(date +%s) - T1 )) s, warnings: $(grep -c 'warning' "$OUTDIR/build.log")"
fi

TEST_RC=0
if want test && enough 120 "gpu tests"; then
  ctest --test-dir "$BUILD" -V --timeout 300 \
    -R '^(test_vae_kernels_gpu|test_vae_decode_gpu|golden_vae_decode_cuda_.*|parallel_golden_vae_decode_cuda_.*)$' \
    > "$OUTDIR/ctest.log" 2>&1
  TEST_RC=$?
  grep -E "Test +#|tests passed|Failed|SKIPPED|\*\*\*|\[vae (gpu|conv)\]|rel-l2|Failure|Expected|Which is" \
    "$OUTDIR/ctest.log" | grep -v "^[0-9]*: Test command" | head -80 | tee -a "$SUMMARY"
fi

run_bench() {  # run_bench TAG ARGS...
  local tag=$1; shift
  timeout $(( $(left) - 15 )) "$BIN" --shapes "$SHAPES" --out "$JSONL" --tag "$tag" "$@" 2>&1 |
    tee "$OUTDIR/bench_$tag.log" | grep -E '^#|vgen_vae_bench' | tee -a "$SUMMARY"
}
if want bench && enough 90 "vgen benchmark"; then
  run_bench bf16 --dtype bf16 --reps 3 --conv-profile
fi
if want variants; then
  enough 90 "variant cache-copy" && run_bench bf16-cache-copy --dtype bf16 --reps 3 --cache-copy
  enough 150 "variant autotune" && run_bench bf16-autotune --dtype bf16 --reps 3 --autotune
  enough 120 "variant fp32" && SHAPES=480p run_bench fp32 --dtype fp32 --reps 1
fi

if want peer && enough 90 "diffusers peer"; then
  WHL=$(ls "$ROOT"/.whl/diffusers-*.whl 2>/dev/null | head -1)
  if [ -z "$WHL" ]; then
    say "SKIPPED peer: no .whl/diffusers-*.whl (carry .whl)"
  else
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL" \
      > "$OUTDIR/peer_install.log" 2>&1 || say "pip install of $WHL failed (peer_install.log)"
    peer=()
    [[ "$SHAPES" == *480p* ]] && peer+=(vae480)
    [[ "$SHAPES" == *720p* ]] && peer+=(vae720)
    PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 timeout $(( $(left) - 10 )) \
      python3 "$ROOT/scripts/bench/peer/diffusers_wan_bench.py" "${peer[@]}" > "$OUTDIR/peer.log" 2>&1
    grep '^{' "$OUTDIR/peer.log" | sed 's/^{/{"tag": "peer", /' >> "$JSONL"
    grep -q '"vae_decode"' "$OUTDIR/peer.log" || { say "peer produced no measurement:"; tail -5 "$OUTDIR/peer.log"; }
  fi
fi

[ -f "$JSONL" ] && cp "$JSONL" "$ROOT/results/vae_bench_$STAMP.jsonl"

# The table: vgen vs peer per shape (peer numbers of this run, else the recorded ones in
# /work/shared/device/README.md: 1.82 s at 480p, 4.17 s and 10.4 GiB at 720p).
python3 - "$JSONL" <<'PY' | tee -a "$SUMMARY"
import json, sys
rows = []
try:
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
except FileNotFoundError:
    pass
recorded = {480: (1.82, None), 720: (4.17, 10.4)}
peer = {r["height"]: (r["seconds"], r.get("peak_mem_gib")) for r in rows
        if r.get("impl", "").startswith("diffusers") and r.get("bench") == "vae_decode" and "seconds" in r}
print("\n%-6s %-18s %9s %9s %7s %9s %9s  %s" % ("shape", "variant", "vgen s", "peer s", "ratio", "vgen GiB",
                                               "peer GiB", "conv calls cudnn/gemm"))
for r in rows:
    if r.get("impl") != "vgen":
        continue
    h = r["height"]
    p, src = peer.get(h, (None, None)), ""
    if p[0] is None and h in recorded:
        p, src = recorded[h], "*"
    cc = r.get("conv_calls_per_decode", {})
    print("%-6s %-18s %9.3f %9s %7s %9.2f %9s  %s/%s" % (
        "%dp" % h, r.get("tag", ""), r["seconds"], ("%.2f%s" % (p[0], src)) if p[0] else "-",
        ("%.3f" % (r["seconds"] / p[0])) if p[0] else "-", r["peak_gib"],
        ("%.1f%s" % (p[1], src)) if p[1] else "-", cc.get("cudnn", "?"), cc.get("gemm", "?")))
print("(* peer number recorded in shared/device/README.md, not measured in this run; GiB = peak live device"
      " memory of one decode incl. weights and the output)")
PY
say "tests rc $TEST_RC, total $(( $(date +%s) - T0 )) s; logs in $OUTDIR"
exit $(( TEST_RC != 0 ))
