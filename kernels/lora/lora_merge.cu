// LoRA merge step on the device (contract in lora_merge.cuh): a grid-stride loop, fp32 arithmetic
// with explicit roundings (__fmul_rn / __fadd_rn: no contraction into an FMA, as the reference).
#include <algorithm>

#include "kernels/common/elem_io.cuh"
#include "kernels/lora/lora_merge.cuh"

namespace vgen::kern {
namespace {

template <typename T> __global__ void lora_add_scaled_kernel(T* dst, const float* src, float factor, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    dst[i] = dev::from_f<T>(__fadd_rn(dev::to_f(dst[i]), __fmul_rn(factor, src[i])));
}

}  // namespace

cudaError_t lora_add_scaled(void* dst, FloatType dst_type, const float* src, float factor, int64_t n,
                            cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65536);
  switch (dst_type) {
    case FloatType::kF32:
      lora_add_scaled_kernel<float><<<unsigned(blocks), threads, 0, stream>>>(static_cast<float*>(dst), src, factor, n);
      break;
    case FloatType::kBF16:
      lora_add_scaled_kernel<dev::bf16>
          <<<unsigned(blocks), threads, 0, stream>>>(static_cast<dev::bf16*>(dst), src, factor, n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace vgen::kern
