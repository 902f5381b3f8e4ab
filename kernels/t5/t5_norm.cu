// T5 layer norm on the device (contract in t5_norm.cuh): one block per row (grid-stride over rows),
// a block-wide fp32 sum of squares, then a second pass over the row that writes y. Each thread
// reads in the second pass only the elements it read in the first, so y may alias x.
#include "kernels/common/elem_io.cuh"
#include "kernels/t5/t5_norm.cuh"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;  // a multiple of 32 (dev::block_sum)

template <typename T>
__global__ void t5_rms_norm_kernel(const T* x, const T* w, T* y, int64_t rows, int64_t dim, float eps) {
  __shared__ float scratch[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * dim;
    T* yr = y + r * dim;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
      const float v = dev::to_f(xr[i]);
      ss += v * v;
    }
    const float mean = dev::block_sum(ss, scratch) / float(dim);
    const float rs = 1.0f / sqrtf(mean + eps);
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
      // bf16: x·rs is cast to the weight dtype first, then multiplied by w (one more rounding).
      const float n = dev::round_as<T>(dev::to_f(xr[i]) * rs);
      yr[i] = dev::from_f<T>(dev::to_f(w[i]) * n);
    }
  }
}

}  // namespace

cudaError_t t5_rms_norm(const void* x, const void* w, void* y, FloatType type, int64_t rows, int64_t dim, float eps,
                        cudaStream_t stream) {
  if (rows < 0 || dim < 0) return cudaErrorInvalidValue;
  if (rows == 0 || dim == 0) return cudaSuccess;
  if (!x || !w || !y) return cudaErrorInvalidValue;
  const unsigned grid = unsigned(rows < 65535 * 16 ? rows : 65535 * 16);
  VGEN_DISPATCH_FB(type, T, {
    t5_rms_norm_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w),
                                                         static_cast<T*>(y), rows, dim, eps);
    return cudaGetLastError();
  });
}

}  // namespace vgen::kern
