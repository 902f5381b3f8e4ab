#include "kernels/common/convert.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace vgen::kern {

namespace {

template <typename T> __device__ __forceinline__ float load_f(const T* p, int64_t i);
template <> __device__ __forceinline__ float load_f<float>(const float* p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float load_f<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
template <> __device__ __forceinline__ float load_f<__half>(const __half* p, int64_t i) { return __half2float(p[i]); }

template <typename T> __device__ __forceinline__ void store_f(T* p, int64_t i, float v);
template <> __device__ __forceinline__ void store_f<float>(float* p, int64_t i, float v) { p[i] = v; }
template <> __device__ __forceinline__ void store_f<__nv_bfloat16>(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ void store_f<__half>(__half* p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}

// Four elements per thread per step, grid-stride; memory-bound, so plain loads suffice.
template <typename S, typename D>
__global__ void convert_kernel(const S* __restrict__ src, D* __restrict__ dst, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x * 4;
  for (int64_t base = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4; base < n; base += stride) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (base + j < n) store_f<D>(dst, base + j, load_f<S>(src, base + j));
  }
}

template <typename S, typename D>
cudaError_t launch(const void* src, void* dst, int64_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  int64_t blocks = (n + kThreads * 4 - 1) / (kThreads * 4);
  if (blocks > 65535 * 8) blocks = 65535 * 8;  // grid-stride covers the rest
  convert_kernel<S, D><<<unsigned(blocks), kThreads, 0, stream>>>(static_cast<const S*>(src), static_cast<D*>(dst), n);
  return cudaGetLastError();
}

template <typename S>
cudaError_t launch_dst(const void* src, void* dst, FloatType dt, int64_t n, cudaStream_t stream) {
  switch (dt) {
    case FloatType::kF32: return launch<S, float>(src, dst, n, stream);
    case FloatType::kBF16: return launch<S, __nv_bfloat16>(src, dst, n, stream);
    case FloatType::kF16: return launch<S, __half>(src, dst, n, stream);
  }
  return cudaErrorInvalidValue;
}

__device__ __forceinline__ uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename D>
__global__ void fill_uniform_kernel(D* __restrict__ dst, int64_t n, uint64_t seed, float lo, float hi) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float u = float(mix64(seed * 0x9e3779b97f4a7c15ull + uint64_t(i)) >> 40) * (1.0f / 16777216.0f);
    store_f<D>(dst, i, lo + (hi - lo) * u);
  }
}

size_t type_size(FloatType t) { return t == FloatType::kF32 ? 4 : 2; }

}  // namespace

cudaError_t convert_float(const void* src, FloatType st, void* dst, FloatType dt, int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (st == dt) {
    if (src == dst) return cudaSuccess;
    return cudaMemcpyAsync(dst, src, size_t(n) * type_size(st), cudaMemcpyDeviceToDevice, stream);
  }
  switch (st) {
    case FloatType::kF32: return launch_dst<float>(src, dst, dt, n, stream);
    case FloatType::kBF16: return launch_dst<__nv_bfloat16>(src, dst, dt, n, stream);
    case FloatType::kF16: return launch_dst<__half>(src, dst, dt, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t fill_uniform(void* dst, FloatType type, int64_t n, uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((n + 255) / 256, 65535 * 8);
  switch (type) {
    case FloatType::kF32:
      fill_uniform_kernel<float><<<unsigned(blocks), 256, 0, stream>>>(static_cast<float*>(dst), n, seed, lo, hi);
      break;
    case FloatType::kBF16:
      fill_uniform_kernel<__nv_bfloat16>
          <<<unsigned(blocks), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), n, seed, lo, hi);
      break;
    case FloatType::kF16:
      fill_uniform_kernel<__half><<<unsigned(blocks), 256, 0, stream>>>(static_cast<__half*>(dst), n, seed, lo, hi);
      break;
  }
  return cudaGetLastError();
}

}  // namespace vgen::kern
