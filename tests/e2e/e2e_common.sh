# Sourced by the e2e drivers: MPI may run as root, one BLAS/OpenMP thread per rank (the invariance
# checks compare bits), a scratch directory $W removed at exit (a driver that sets its own EXIT trap
# removes it there), fail(), and prompts N FILE (N plain-text prompts).
# usage: source e2e_common.sh NAME   (the scratch directory is /tmp/vgen_NAME_XXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
MPIRUN=${MPIRUN:-mpirun}
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # e2e_check.py: helpers of the Python checks
export E2E_DIR
W=$(mktemp -d "/tmp/vgen_${1:-e2e}_XXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The finished MP4s of a folder, not the one being encoded (<stem>.tmp.mp4, renamed when done: a
# glob can see the temporary, and a second glob, racing the rename, neither name).
finished_videos() { ls "$1" 2> /dev/null | grep '\.mp4$' | grep -v '\.tmp\.mp4$'; }
prompts() {  # n file
  for i in $(seq 1 "$1"); do echo "prompt number $i, a small red cube turns"; done > "$2"
}
