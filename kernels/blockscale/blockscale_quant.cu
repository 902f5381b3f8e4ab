#include "kernels/blockscale/blockscale_quant.cuh"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "kernels/blockscale/blockscale_format.h"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float load_x(const void* x, bool bf16, int64_t i) {
  return bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(x)[i]) : static_cast<const float*>(x)[i];
}

// e4m3 of a finite v, round to nearest even with saturation (fp8_e4m3_encode's for finite inputs).
__device__ __forceinline__ uint8_t e4m3_sat(float v) {
  return uint8_t(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
}

// The finite |max| of the values of block [k0, k0 + n) of row r (0 beyond K), and whether any is
// NaN or Inf; v gets the values.
template <int N>
__device__ __forceinline__ bool load_block(const void* x, bool bf16, int64_t r, int64_t k0, int64_t K, int64_t ldx,
                                           float (&v)[N], float* amax) {
  bool special = false;
  float a = 0.0f;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    v[i] = k0 + i < K ? load_x(x, bf16, r * ldx + k0 + i) : 0.0f;
    special |= !isfinite(v[i]);
    a = fmaxf(a, fabsf(v[i]));
  }
  *amax = a;
  return special;
}

__global__ void mxfp8_quantize_kernel(const void* x, bool bf16, int64_t rows, int64_t K, int64_t ldx, int64_t kblocks,
                                      uint8_t* q, uint8_t* sf) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * kblocks) return;
  const int64_t r = idx / kblocks, b = idx % kblocks;
  float v[kMxfp8Block], amax;
  const bool special = load_block(x, bf16, r, b * kMxfp8Block, K, ldx, v, &amax);
  const int e = mxfp8_scale_exp(amax);
  const float inv = bs_exp2i(-e);  // exact: V · 2^-e
  uint32_t words[kMxfp8Block / 4];
#pragma unroll
  for (int w = 0; w < kMxfp8Block / 4; ++w) {
    uint32_t word = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) word |= uint32_t(special ? 0 : e4m3_sat(__fmul_rn(v[4 * w + c], inv))) << (8 * c);
    words[w] = word;
  }
  uint4* dst = reinterpret_cast<uint4*>(q + r * kblocks * kMxfp8Block + b * kMxfp8Block);
  dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
  dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
  sf[bs_scale_offset(r, b, kblocks)] = special ? kUe8m0Nan : uint8_t(e + 127);
}

__global__ void nvfp4_quantize_kernel(const void* x, bool bf16, int64_t rows, int64_t K, int64_t ldx, int64_t kblocks,
                                      const float* scale, int64_t scale_stride, uint8_t* q, uint8_t* sf) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * kblocks) return;
  const int64_t r = idx / kblocks, b = idx % kblocks;
  float v[kNvfp4Block], amax;
  const bool special = load_block(x, bf16, r, b * kNvfp4Block, K, ldx, v, &amax);
  const float s_enc = scale[r * scale_stride];
  // The host's order: (amax / 6) · S, then S / decoded scale, then v · that.
  const uint8_t code = special ? uint8_t(0x7F) : e4m3_sat(__fmul_rn(__fdiv_rn(amax, kE2m1Max), s_enc));
  const float sd = e4m3_decode_hd(code);
  const float mul = !special && sd > 0.0f ? __fdiv_rn(s_enc, sd) : 0.0f;
  uint32_t lo = 0, hi = 0;
#pragma unroll
  for (int i = 0; i < kNvfp4Block; ++i) {
    const uint32_t c = special ? 0u : e2m1_encode(__fmul_rn(v[i], mul));
    if (i < 8) lo |= c << (4 * i);
    else hi |= c << (4 * (i - 8));
  }
  *reinterpret_cast<uint2*>(q + r * kblocks * (kNvfp4Block / 2) + b * (kNvfp4Block / 2)) = make_uint2(lo, hi);
  sf[bs_scale_offset(r, b, kblocks)] = code;
}

// The block's largest finite |x| over [begin, end) of row-major rows (stride ldx, K wide).
__device__ float block_finite_amax(const void* x, bool bf16, int64_t K, int64_t ldx, int64_t begin, int64_t end,
                                   int64_t step) {
  float a = 0.0f;
  for (int64_t i = begin; i < end; i += step) {
    const float v = load_x(x, bf16, (i / K) * ldx + i % K);
    if (isfinite(v)) a = fmaxf(a, fabsf(v));
  }
  __shared__ float red[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = a;
  __syncthreads();
  a = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) a = fmaxf(a, red[w]);
  __syncthreads();
  return a;
}

__device__ __forceinline__ float tensor_scale_of(float amax) {
  return amax >= kFp8MinAmax && amax < 3.0e38f ? __fdiv_rn(kFp8E4M3Max * kE2m1Max, amax) : 1.0f;
}

// Row r's S (one block per row).
__global__ void nvfp4_row_scales_kernel(const void* x, bool bf16, int64_t K, int64_t ldx, float* scale) {
  const int64_t r = blockIdx.x;
  const float a = block_finite_amax(x, bf16, K, ldx, r * K + threadIdx.x, (r + 1) * K, kThreads);
  if (threadIdx.x == 0) scale[r] = tensor_scale_of(a);
}

// The tensor's finite amax as the bits of a non-negative float (ordered as integers).
__global__ void finite_amax_kernel(const void* x, bool bf16, int64_t n, int64_t K, int64_t ldx, unsigned* amax_bits) {
  const int64_t step = int64_t(gridDim.x) * kThreads;
  const float a = block_finite_amax(x, bf16, K, ldx, int64_t(blockIdx.x) * kThreads + threadIdx.x, n, step);
  if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(a));
}

__global__ void amax_to_scale_kernel(float* scale) { *scale = tensor_scale_of(*scale); }

unsigned grid_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

cudaError_t check_args(const void* x, int64_t rows, int64_t K, int64_t ldx) {
  if (rows < 0 || K < 0 || (rows > 0 && K > 0 && (!x || ldx < K))) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

cudaError_t mxfp8_quantize(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, uint8_t* q, uint8_t* sf,
                           cudaStream_t stream) {
  if (cudaError_t e = check_args(x, rows, K, ldx)) return e;
  const int64_t kblocks = blockscale_padded_k(K) / kMxfp8Block;
  if (rows == 0 || kblocks == 0) return cudaSuccess;
  if (cudaError_t e = cudaMemsetAsync(sf, 0, size_t(bs_scales_bytes(rows, kblocks)), stream)) return e;
  mxfp8_quantize_kernel<<<grid_for(rows * kblocks), kThreads, 0, stream>>>(x, x_bf16, rows, K, ldx, kblocks, q, sf);
  return cudaGetLastError();
}

cudaError_t nvfp4_tensor_scale_device(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, float* scale,
                                      cudaStream_t stream) {
  if (cudaError_t e = check_args(x, rows, K, ldx)) return e;
  if (cudaError_t e = cudaMemsetAsync(scale, 0, sizeof(float), stream)) return e;
  const int64_t n = rows * K;
  if (n > 0) {
    const unsigned blocks = unsigned(std::min<int64_t>(grid_for(n), 1024));
    finite_amax_kernel<<<blocks, kThreads, 0, stream>>>(x, x_bf16, n, K, ldx, reinterpret_cast<unsigned*>(scale));
  }
  amax_to_scale_kernel<<<1, 1, 0, stream>>>(scale);
  return cudaGetLastError();
}

cudaError_t nvfp4_row_scales_device(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, float* scale,
                                    cudaStream_t stream) {
  if (cudaError_t e = check_args(x, rows, K, ldx)) return e;
  if (rows == 0) return cudaSuccess;
  nvfp4_row_scales_kernel<<<unsigned(rows), kThreads, 0, stream>>>(x, x_bf16, K, ldx, scale);
  return cudaGetLastError();
}

cudaError_t nvfp4_quantize(const void* x, bool x_bf16, int64_t rows, int64_t K, int64_t ldx, const float* scale,
                           int64_t scale_stride, uint8_t* q, uint8_t* sf, cudaStream_t stream) {
  if (cudaError_t e = check_args(x, rows, K, ldx)) return e;
  const int64_t kblocks = blockscale_padded_k(K) / kNvfp4Block;
  if (rows == 0 || kblocks == 0) return cudaSuccess;
  if (cudaError_t e = cudaMemsetAsync(sf, 0, size_t(bs_scales_bytes(rows, kblocks)), stream)) return e;
  nvfp4_quantize_kernel<<<grid_for(rows * kblocks), kThreads, 0, stream>>>(x, x_bf16, rows, K, ldx, kblocks, scale,
                                                                             scale_stride, q, sf);
  return cudaGetLastError();
}

}  // namespace vgen::kern
