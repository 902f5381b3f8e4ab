// K/V head repeat on the device (contract in repeat_kv.cuh): one thread per output element.
#include "kernels/common/elem_io.cuh"
#include "kernels/gqa/repeat_kv.cuh"

namespace vgen::kern {
namespace {

template <typename T>
__global__ void repeat_kv_kernel(const T* __restrict__ kv, T* __restrict__ out, int64_t n, int64_t KVH,
                                 int64_t groups, int64_t D) {
  const int64_t H = KVH * groups;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = e % D, h = (e / D) % H, r = e / (D * H);
    out[e] = kv[(r * KVH + h / groups) * D + d];
  }
}

}  // namespace

cudaError_t repeat_kv(const void* kv, void* out, FloatType type, int64_t rows, int64_t KVH, int64_t groups, int64_t D,
                      cudaStream_t stream) {
  if (rows < 0 || KVH < 1 || groups < 1 || D < 1) return cudaErrorInvalidValue;
  const int64_t n = rows * KVH * groups * D;
  if (n == 0) return cudaSuccess;
  if (!kv || !out) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const unsigned blocks = dev::grid_for(n, kThreads);
  VGEN_DISPATCH_FB(type, T, {
    repeat_kv_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(kv), static_cast<T*>(out), n, KVH,
                                                         groups, D);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
