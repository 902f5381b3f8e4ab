// Strided run copy on the device (contract in copy_runs.cuh): one thread per unit of a run,
// grid-stride over all runs.
#include "kernels/seq_shuffle/copy_runs.cuh"

namespace vgen::kern {
namespace {

struct RunGrid {
  int64_t d1, d2;          // runs along dims 1 and 2
  int64_t s0, s1, s2;      // source strides (units)
  int64_t t0, t1, t2;      // destination strides (units)
  int64_t run;             // units per run
  int64_t total;           // units in all runs
};

template <typename U>
__global__ void copy_runs_kernel(const U* __restrict__ src, U* __restrict__ dst, RunGrid g) {
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < g.total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = e % g.run, r = e / g.run;
    const int64_t l = r % g.d2, j = (r / g.d2) % g.d1, i = r / (g.d2 * g.d1);
    dst[i * g.t0 + j * g.t1 + l * g.t2 + k] = src[i * g.s0 + j * g.s1 + l * g.s2 + k];
  }
}

template <typename U>
cudaError_t launch(const void* src, void* dst, const int64_t (&dims)[3], const int64_t (&ss)[3],
                   const int64_t (&ds)[3], int64_t run_bytes, cudaStream_t stream) {
  const int64_t u = int64_t(sizeof(U));
  RunGrid g;
  g.d1 = dims[1], g.d2 = dims[2];
  g.s0 = ss[0] / u, g.s1 = ss[1] / u, g.s2 = ss[2] / u;
  g.t0 = ds[0] / u, g.t1 = ds[1] / u, g.t2 = ds[2] / u;
  g.run = run_bytes / u;
  g.total = dims[0] * dims[1] * dims[2] * g.run;
  int64_t blocks = (g.total + 255) / 256;
  if (blocks > int64_t(65535) * 16) blocks = int64_t(65535) * 16;
  copy_runs_kernel<U><<<unsigned(blocks), 256, 0, stream>>>(static_cast<const U*>(src), static_cast<U*>(dst), g);
  return cudaGetLastError();
}

bool all_multiple(int64_t m, const void* src, const void* dst, const int64_t (&ss)[3], const int64_t (&ds)[3],
                  int64_t run) {
  if (reinterpret_cast<uintptr_t>(src) % uint64_t(m) || reinterpret_cast<uintptr_t>(dst) % uint64_t(m)) return false;
  if (run % m) return false;
  for (int i = 0; i < 3; ++i)
    if (ss[i] % m || ds[i] % m) return false;
  return true;
}

}  // namespace

cudaError_t copy_runs(const void* src, void* dst, const int64_t (&dims)[3], const int64_t (&ss)[3],
                      const int64_t (&ds)[3], int64_t run_bytes, cudaStream_t stream) {
  for (int i = 0; i < 3; ++i)
    if (dims[i] < 0) return cudaErrorInvalidValue;
  if (run_bytes < 0) return cudaErrorInvalidValue;
  if (dims[0] * dims[1] * dims[2] == 0 || run_bytes == 0) return cudaSuccess;
  if (all_multiple(16, src, dst, ss, ds, run_bytes)) return launch<uint4>(src, dst, dims, ss, ds, run_bytes, stream);
  if (all_multiple(8, src, dst, ss, ds, run_bytes)) return launch<uint2>(src, dst, dims, ss, ds, run_bytes, stream);
  if (all_multiple(4, src, dst, ss, ds, run_bytes)) return launch<uint32_t>(src, dst, dims, ss, ds, run_bytes, stream);
  return launch<unsigned char>(src, dst, dims, ss, ds, run_bytes, stream);
}

}  // namespace vgen::kern
