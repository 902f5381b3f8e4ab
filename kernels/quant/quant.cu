#include "kernels/quant/quant.cuh"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/common/elem_io.cuh"
#include "kernels/quant/e4m3_pack.cuh"
#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/int8_ref.h"

namespace vgen::kern {

namespace {

using dev::bf16;

constexpr int kMaxThreads = 256;
constexpr int kMaxVecs = 8;  // 8-element vectors per thread in the register kernel

// 16-byte loads per 8 elements.
template <typename T> constexpr int kLoads = sizeof(T) == 2 ? 1 : 2;

template <typename T> __device__ __forceinline__ void unpack8(const uint4 (&r)[kLoads<T>], float (&v)[8]) {
  const T* e = reinterpret_cast<const T*>(&r[0]);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = dev::to_f(e[j]);
}

// The group scale's top code: 448 for e4m3, 127 for INT8 (kI8).
template <bool kI8> constexpr float kTop = kI8 ? kInt8Max : kFp8E4M3Max;

// One block per row; thread t holds the 8-element vectors i·blockDim.x + t (i < V) of its row.
template <typename T, int V, bool kI8>
__global__ void __launch_bounds__(kMaxThreads)
    quant_rows_regs_kernel(const T* __restrict__ x, int64_t ldx, int64_t K, uint8_t* __restrict__ x8,
                           float* __restrict__ scale) {
  __shared__ float red[33];
  const int64_t m = blockIdx.x, nvec = K / 8;
  const T* row = x + m * ldx;
  uint4 raw[V][kLoads<T>];
  float a = 0.0f;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t vi = int64_t(i) * blockDim.x + threadIdx.x;
#pragma unroll
    for (int c = 0; c < kLoads<T>; ++c)
      raw[i][c] = vi < nvec ? __ldg(reinterpret_cast<const uint4*>(row + vi * 8) + c) : make_uint4(0, 0, 0, 0);
    float v[8];
    unpack8<T>(raw[i], v);
#pragma unroll
    for (int j = 0; j < 8; ++j) a = fmaxf(a, fabsf(v[j]));  // fmaxf ignores NaN
  }
  a = dev::block_max(a, red);
  const float mul = group_quant_mul(kTop<kI8>, a);
  uint8_t* out = x8 + m * K;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t vi = int64_t(i) * blockDim.x + threadIdx.x;
    if (vi >= nvec) continue;
    float v[8];
    unpack8<T>(raw[i], v);
    *reinterpret_cast<uint2*>(out + vi * 8) = kI8 ? int8_pack8(v, mul) : e4m3_pack8(v, mul);
  }
  if (threadIdx.x == 0) scale[m] = group_dequant_mul(kTop<kI8>, a);
}

// Any K, stride and alignment: one block per row, the row read twice (the second pass mostly hits L2).
template <typename T, bool kI8>
__global__ void __launch_bounds__(kMaxThreads)
    quant_rows_any_kernel(const T* __restrict__ x, int64_t ldx, int64_t K, uint8_t* __restrict__ x8,
                          float* __restrict__ scale) {
  __shared__ float red[33];
  const int64_t m = blockIdx.x;
  const T* row = x + m * ldx;
  float a = 0.0f;
  for (int64_t k = threadIdx.x; k < K; k += blockDim.x) a = fmaxf(a, fabsf(dev::to_f(row[k])));
  a = dev::block_max(a, red);
  const float mul = group_quant_mul(kTop<kI8>, a);
  uint8_t* out = x8 + m * K;
  for (int64_t k = threadIdx.x; k < K; k += blockDim.x)
    out[k] = kI8 ? uint8_t(int8_bits(dev::to_f(row[k]) * mul))
                 : __nv_cvt_float_to_fp8(e4m3_scaled(dev::to_f(row[k]), mul), __NV_SATFINITE, __NV_E4M3);
  if (threadIdx.x == 0) scale[m] = group_dequant_mul(kTop<kI8>, a);
}

// Threads (a multiple of 32, ≤ kMaxThreads) and vectors per thread for nvec vectors: the least idle
// slots, then the most vectors per thread (more loads in flight per thread).
bool regs_shape(int64_t nvec, int* threads, int* vecs) {
  int64_t best = -1;
  for (int v = kMaxVecs; v >= 1; --v) {
    const int64_t t = ((nvec + v - 1) / v + 31) / 32 * 32;
    if (t > kMaxThreads) continue;
    const int64_t waste = t * v - nvec;
    if (best < 0 || waste < best) best = waste, *threads = int(t), *vecs = v;
  }
  return best >= 0;
}

template <typename T, bool kI8>
cudaError_t launch_quant(const T* x, int64_t M, int64_t K, int64_t ldx, uint8_t* x8, float* scale,
                         cudaStream_t stream) {
  int threads = 0, vecs = 0;
  const bool regs = K > 0 && K % 8 == 0 && dev::aligned16(x) && (ldx * int64_t(sizeof(T))) % 16 == 0 &&
                    regs_shape(K / 8, &threads, &vecs);
  const unsigned grid = unsigned(M);
  if (!regs) {
    const int t = K >= 1024 ? kMaxThreads : K >= 256 ? 128 : 32;
    quant_rows_any_kernel<T, kI8><<<grid, t, 0, stream>>>(x, ldx, K, x8, scale);
    return cudaGetLastError();
  }
  switch (vecs) {
#define VGEN_QUANT_CASE(V) \
  case V: quant_rows_regs_kernel<T, V, kI8><<<grid, threads, 0, stream>>>(x, ldx, K, x8, scale); break;
    VGEN_QUANT_CASE(1) VGEN_QUANT_CASE(2) VGEN_QUANT_CASE(3) VGEN_QUANT_CASE(4)
    VGEN_QUANT_CASE(5) VGEN_QUANT_CASE(6) VGEN_QUANT_CASE(7) VGEN_QUANT_CASE(8)
#undef VGEN_QUANT_CASE
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

__global__ void scale_vector_kernel(const float* s, const float* g, float* out, int64_t N) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < N; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = g ? s[i] * g[i] : s[i];
}

__global__ void encode_kernel(const float* x, int64_t n, uint8_t* out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __nv_cvt_float_to_fp8(x[i], __NV_SATFINITE, __NV_E4M3);
}

}  // namespace

namespace {
template <bool kI8>
cudaError_t quantize_rows(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, uint8_t* x8, float* scale,
                          cudaStream_t stream) {
  if (M < 0 || K < 0 || ldx < K || M > 0x7fffffff) return cudaErrorInvalidValue;
  if (M == 0) return cudaSuccess;
  if (!scale || (K > 0 && (!x || !x8))) return cudaErrorInvalidValue;
  if (x_bf16) return launch_quant<bf16, kI8>(static_cast<const bf16*>(x), M, K, ldx, x8, scale, stream);
  return launch_quant<float, kI8>(static_cast<const float*>(x), M, K, ldx, x8, scale, stream);
}
}  // namespace

cudaError_t quantize_rows_fp8(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, uint8_t* x8,
                              float* scale, cudaStream_t stream) {
  return quantize_rows<false>(x, x_bf16, M, K, ldx, x8, scale, stream);
}

cudaError_t quantize_rows_int8(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, int8_t* x8,
                               float* scale, cudaStream_t stream) {
  return quantize_rows<true>(x, x_bf16, M, K, ldx, reinterpret_cast<uint8_t*>(x8), scale, stream);
}

cudaError_t fp8_scale_vector(const float* s, const float* g, float* out, int64_t N, cudaStream_t stream) {
  if (N < 0 || (N > 0 && (!s || !out))) return cudaErrorInvalidValue;
  if (N == 0) return cudaSuccess;
  scale_vector_kernel<<<dev::grid_for(N, 256), 256, 0, stream>>>(s, g, out, N);
  return cudaGetLastError();
}

cudaError_t fp8_e4m3_encode_device(const float* x, int64_t n, uint8_t* out, cudaStream_t stream) {
  if (n < 0 || (n > 0 && (!x || !out))) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  encode_kernel<<<dev::grid_for(n, 256), 256, 0, stream>>>(x, n, out);
  return cudaGetLastError();
}

}  // namespace vgen::kern
