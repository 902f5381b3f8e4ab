#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/conv3d/conv_weight.cuh"

namespace vgen::kern {
namespace {

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }

// One thread per output element, consecutive threads along Cin (coalesced writes).
template <typename T>
__global__ void conv_weight_taps_last_kernel(const float* __restrict__ src, T* __restrict__ dst, ConvWeightDims d) {
  const int64_t n = d.cout_store * d.taps * d.cin;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ci = i % d.cin, t = (i / d.cin) % d.taps, co = i / (d.cin * d.taps);
    dst[i] = from_f32<T>(co < d.cout ? src[(co * d.cin + ci) * d.taps + t] : 0.0f);
  }
}

template <typename T> cudaError_t launch(const float* src, void* dst, const ConvWeightDims& d, cudaStream_t stream) {
  const int64_t n = d.cout_store * d.taps * d.cin;
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const int blocks = int((n + threads - 1) / threads < 65536 ? (n + threads - 1) / threads : 65536);
  conv_weight_taps_last_kernel<T><<<blocks, threads, 0, stream>>>(src, static_cast<T*>(dst), d);
  return cudaGetLastError();
}

}  // namespace

cudaError_t conv_weight_taps_last(const float* src, void* dst, FloatType dst_type, const ConvWeightDims& d,
                                  cudaStream_t stream) {
  if (d.cout < 0 || d.cout_store < d.cout || d.cin < 0 || d.taps < 1) return cudaErrorInvalidValue;
  switch (dst_type) {
    case FloatType::kF32: return launch<float>(src, dst, d, stream);
    case FloatType::kBF16: return launch<__nv_bfloat16>(src, dst, d, stream);
    case FloatType::kF16: return launch<__half>(src, dst, d, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace vgen::kern
