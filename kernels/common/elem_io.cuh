// Device-side helpers shared by the DiT's memory-bound kernels (norm, rope, elementwise,
// activation, embed): fp32 loads/stores of f32 / bf16 elements, rounding "as a store of T would",
// 16-byte vector access, block reductions and the type dispatch from kern::FloatType.
// Header-only, CUDA sources only. Never includes lib/.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern::dev {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float v) { return __float2bfloat16_rn(v); }

// v rounded as a store into T would round it (identity for float).
template <typename T> __device__ __forceinline__ float round_as(float v) { return to_f(from_f<T>(v)); }

// Elements per 16-byte vector.
template <typename T> constexpr int kVec = 16 / int(sizeof(T));

// Loads/stores kVec<T> consecutive elements as fp32 (p 16-byte aligned).
template <typename T> __device__ __forceinline__ void load_vec(const T* p, float (&v)[kVec<T>]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec<T>; ++i) v[i] = to_f(e[i]);
}
template <typename T> __device__ __forceinline__ void store_vec(T* p, const float (&v)[kVec<T>]) {
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec<T>; ++i) e[i] = from_f<T>(v[i]);
  *reinterpret_cast<uint4*>(p) = raw;
}

// 8 consecutive elements as fp32 (p 16-byte aligned): one 16-byte access for bf16, two for f32.
template <typename T> __device__ __forceinline__ void load8(const T* p, float (&v)[8]) {
  if constexpr (sizeof(T) == 2) {
    load_vec<T>(p, v);
  } else {
    float a[4], b[4];
    load_vec<T>(p, a);
    load_vec<T>(p + 4, b);
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = a[i], v[4 + i] = b[i];
  }
}
template <typename T> __device__ __forceinline__ void store8(T* p, const float (&v)[8]) {
  if constexpr (sizeof(T) == 2) {
    store_vec<T>(p, v);
  } else {
    float a[4], b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = v[i], b[i] = v[4 + i];
    store_vec<T>(p, a);
    store_vec<T>(p + 4, b);
  }
}

// The 8 bf16 of a 16-byte word (kept raw in registers: half the registers of floats) as fp32.
__device__ __forceinline__ void bf16x8_to_f32(const uint4& raw, float (&v)[8]) {
  const bf16* e = reinterpret_cast<const bf16*>(&raw);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = __bfloat162float(e[j]);
}

// 8 floats to/from shared memory as two 16-byte accesses (p 16-byte aligned): a warp touching
// consecutive 32-byte pieces is conflict-free, unlike 8 scalar accesses with a stride of 8.
__device__ __forceinline__ void smem_store8(float* p, const float (&v)[8]) {
  reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void smem_load8(const float* p, float (&v)[8]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Reduction over the block with `op` (blockDim.x a multiple of 32, at most 1024; `idle` fills the
// lanes of warp 0 beyond the warp count); every thread gets the result. `scratch` holds 33 floats of
// shared memory; safe to call repeatedly.
template <typename Op>
__device__ __forceinline__ float block_reduce(float v, float* scratch, Op op, float idle) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // previous use of scratch is finished
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float s = lane < nwarps ? scratch[lane] : idle;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s = op(s, __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) scratch[32] = s;
  }
  __syncthreads();
  return scratch[32];
}

// Sum over the block, as block_reduce.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return block_reduce(v, scratch, [](float x, float y) { return x + y; }, 0.0f);
}

// Max over the block of non-negative values, as block_reduce.
__device__ __forceinline__ float block_max(float v, float* scratch) {
  return block_reduce(v, scratch, [](float x, float y) { return fmaxf(x, y); }, 0.0f);
}

// Grid size for a grid-stride loop over n work items with `threads` per block.
inline unsigned grid_for(int64_t n, int threads, int64_t max_blocks = int64_t(65535) * 16) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > max_blocks) b = max_blocks;
  return unsigned(b);
}

}  // namespace vgen::kern::dev

// Calls BODY with `using T = <float or bf16>` for a FloatType (f16 is not a DiT type: returns
// cudaErrorInvalidValue). Use inside a function returning cudaError_t.
#define VGEN_DISPATCH_FB(ft, T, ...)                                              \
  do {                                                                            \
    if ((ft) == ::vgen::kern::FloatType::kF32) {                                  \
      using T = float;                                                            \
      __VA_ARGS__                                                                 \
    } else if ((ft) == ::vgen::kern::FloatType::kBF16) {                          \
      using T = ::vgen::kern::dev::bf16;                                          \
      __VA_ARGS__                                                                 \
    } else {                                                                      \
      return cudaErrorInvalidValue;                                               \
    }                                                                             \
  } while (0)
