// Relative position bias gather on the device (contract in rel_bias.cuh): one thread per output
// element in a grid-stride loop.
#include <cmath>

#include "kernels/common/elem_io.cuh"
#include "kernels/t5/rel_bias.cuh"

namespace vgen::kern {
namespace {

template <typename T>
__global__ void rel_bias_kernel(const T* table, const int64_t* bucket, float* bias, int64_t H, int64_t num_rel,
                                int64_t num_buckets) {
  const int64_t n = H * num_rel, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    const int64_t h = e / num_rel, t = e % num_rel;  // bias [H, num_rel]
    const int64_t b = bucket[t];
    bias[e] = (b >= 0 && b < num_buckets) ? dev::to_f(table[b * H + h]) : NAN;
  }
}

}  // namespace

cudaError_t t5_rel_bias_gather(const void* table, FloatType table_type, const int64_t* bucket, float* bias,
                               int64_t num_heads, int64_t num_rel, int64_t num_buckets, cudaStream_t stream) {
  if (num_heads < 0 || num_rel < 0 || num_buckets < 0) return cudaErrorInvalidValue;
  if (num_heads == 0 || num_rel == 0) return cudaSuccess;
  if (!table || !bucket || !bias) return cudaErrorInvalidValue;
  VGEN_DISPATCH_FB(table_type, T, {
    rel_bias_kernel<T><<<dev::grid_for(num_heads * num_rel, 256), 256, 0, stream>>>(
        static_cast<const T*>(table), bucket, bias, num_heads, num_rel, num_buckets);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
