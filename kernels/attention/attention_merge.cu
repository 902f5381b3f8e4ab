// LSE merge of two partial attention results (Ring / Attention2D), as attention_merge_ref.
#include <cuda_bf16.h>

#include <cmath>

#include "kernels/attention/attention.cuh"

namespace vgen::kern {

namespace {

// One warp per (b, s, h) row: every lane reads both lse values before lane 0 writes the merged
// one (__syncwarp between), and the lanes split the D outputs.
template <bool kO2Bf16>
__global__ void attention_merge_kernel(float* o1, float* lse1, const void* o2, const float* lse2, int64_t B, int64_t S,
                                       int64_t H, int64_t D) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;  // (b*S + s)*H + h
  const int lane = threadIdx.x % 32;
  if (row >= B * S * H) return;  // uniform per warp
  const int64_t h = row % H, bs = row / H, s = bs % S, b = bs / S;
  const int64_t li = (b * H + h) * S + s;
  const float l1 = lse1[li], l2 = lse2[li];
  float* a = o1 + row * D;
  auto c = [&](int64_t d) -> float {
    if constexpr (kO2Bf16)
      return __bfloat162float(static_cast<const __nv_bfloat16*>(o2)[row * D + d]);
    else
      return static_cast<const float*>(o2)[row * D + d];
  };
  if (l2 == -INFINITY) return;  // nothing to merge
  if (l1 == -INFINITY) {
    for (int64_t d = lane; d < D; d += 32) a[d] = c(d);
    __syncwarp();
    if (lane == 0) lse1[li] = l2;
    return;
  }
  const float m = fmaxf(l1, l2);
  const float w1 = expf(l1 - m), w2 = expf(l2 - m), tot = w1 + w2;
  for (int64_t d = lane; d < D; d += 32) a[d] = (w1 * a[d] + w2 * c(d)) / tot;
  __syncwarp();
  if (lane == 0) lse1[li] = m + logf(tot);
}

struct MergeParts {
  const __nv_bfloat16* o[kAttnMaxMergeParts];
  const float* lse[kAttnMaxMergeParts];
};

// Weights of the parts of row li (max-shifted exp of each lse; a part with no valid key has lse
// -inf: weight 0), their sum in *tot and the merged lse in *lse.
__device__ __forceinline__ void part_weights(const MergeParts& p, int n, int64_t li, float (&w)[kAttnMaxMergeParts],
                                             float* tot, float* lse) {
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) {
    w[i] = p.lse[i][li];
    m = fmaxf(m, w[i]);
  }
  float t = 0.f;
  for (int i = 0; i < n; ++i) {
    w[i] = m == -INFINITY ? 0.f : expf(w[i] - m);
    t += w[i];
  }
  *tot = t;
  *lse = t > 0.f ? m + logf(t) : -INFINITY;
}

// One warp per (b, s, h) row; lane l owns columns l, l+32, ... (coalesced across the warp).
__global__ void attention_merge_parts_kernel(MergeParts p, int n, __nv_bfloat16* out, float* lse_out, int64_t B,
                                             int64_t S, int64_t H, int64_t D) {
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;  // (b*S + s)*H + h
  const int lane = threadIdx.x % 32;
  if (row >= B * S * H) return;  // uniform per warp
  const int64_t h = row % H, bs = row / H, s = bs % S, b = bs / S;
  const int64_t li = (b * H + h) * S + s;
  float w[kAttnMaxMergeParts], tot, lse;
  part_weights(p, n, li, w, &tot, &lse);
  const float inv = tot > 0.f ? 1.f / tot : 0.f;
  __nv_bfloat16* o = out + row * D;
  for (int64_t d = lane; d < D; d += 32) {
    float acc = 0.f;
    for (int i = 0; i < n; ++i)
      if (w[i] != 0.f) acc += w[i] * __bfloat162float(p.o[i][row * D + d]);
    o[d] = __float2bfloat16_rn(acc * inv);
  }
  if (lse_out && lane == 0) lse_out[li] = lse;
}

// D % 8 == 0 and 16-byte aligned rows: one thread per 8 columns of a row, 16-byte loads and stores
// (a warp covers 256 contiguous columns: full sectors). The same values as the warp-per-row kernel.
__global__ void attention_merge_parts_vec8_kernel(MergeParts p, int n, __nv_bfloat16* out, float* lse_out, int64_t B,
                                                  int64_t S, int64_t H, int64_t D) {
  const int64_t chunks = D / 8;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= B * S * H * chunks) return;
  const int64_t row = t / chunks, c = t - row * chunks;  // row = (b*S + s)*H + h
  const int64_t h = row % H, bs = row / H, s = bs % S, b = bs / S;
  const int64_t li = (b * H + h) * S + s;
  float w[kAttnMaxMergeParts], tot, lse;
  part_weights(p, n, li, w, &tot, &lse);
  const float inv = tot > 0.f ? 1.f / tot : 0.f;
  float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (int i = 0; i < n; ++i) {
    if (w[i] == 0.f) continue;
    const uint4 raw = *reinterpret_cast<const uint4*>(p.o[i] + row * D + 8 * c);
    const __nv_bfloat162* v = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(v[j]);
      acc[2 * j] += w[i] * f.x;
      acc[2 * j + 1] += w[i] * f.y;
    }
  }
  uint4 res;
  __nv_bfloat162* r = reinterpret_cast<__nv_bfloat162*>(&res);
#pragma unroll
  for (int j = 0; j < 4; ++j) r[j] = __floats2bfloat162_rn(acc[2 * j] * inv, acc[2 * j + 1] * inv);
  *reinterpret_cast<uint4*>(out + row * D + 8 * c) = res;
  if (lse_out && c == 0) lse_out[li] = lse;
}

}  // namespace

cudaError_t attention_merge_parts_bf16(const void* const* parts, const float* const* lses, int n, void* out,
                                       float* lse_out, int64_t B, int64_t S, int64_t H, int64_t D,
                                       cudaStream_t stream) {
  if (B < 0 || S < 0 || H < 0 || D < 0 || n < 1 || n > kAttnMaxMergeParts) return cudaErrorInvalidValue;
  const int64_t rows = B * S * H;
  if (rows == 0 || D == 0) return cudaSuccess;
  if (!out || !parts || !lses) return cudaErrorInvalidValue;
  MergeParts p{};
  for (int i = 0; i < n; ++i) {
    if (!parts[i] || !lses[i]) return cudaErrorInvalidValue;
    p.o[i] = static_cast<const __nv_bfloat16*>(parts[i]);
    p.lse[i] = lses[i];
  }
  constexpr int kThreads = 256;
  bool vec = D % 8 == 0 && (reinterpret_cast<uintptr_t>(out) & 15u) == 0;
  for (int i = 0; i < n; ++i) vec = vec && (reinterpret_cast<uintptr_t>(parts[i]) & 15u) == 0;
  const int64_t threads = vec ? rows * (D / 8) : rows * 32;  // vec: 8 columns per thread; else a warp per row
  const int64_t blocks = (threads + kThreads - 1) / kThreads;
  if (blocks > int64_t(0x7fffffff)) return cudaErrorInvalidValue;
  if (vec)
    attention_merge_parts_vec8_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(
        p, n, static_cast<__nv_bfloat16*>(out), lse_out, B, S, H, D);
  else
    attention_merge_parts_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(p, n, static_cast<__nv_bfloat16*>(out),
                                                                            lse_out, B, S, H, D);
  return cudaGetLastError();
}

cudaError_t attention_merge(float* o1, float* lse1, const void* o2, bool o2_bf16, const float* lse2, int64_t B,
                            int64_t S, int64_t H, int64_t D, cudaStream_t stream) {
  if (B < 0 || S < 0 || H < 0 || D < 0) return cudaErrorInvalidValue;
  const int64_t rows = B * S * H;
  if (rows == 0 || D == 0) return cudaSuccess;
  if (!o1 || !lse1 || !o2 || !lse2) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;  // 8 rows per block
  const int64_t blocks = (rows * 32 + kThreads - 1) / kThreads;
  if (blocks > int64_t(0x7fffffff)) return cudaErrorInvalidValue;
  if (o2_bf16)
    attention_merge_kernel<true><<<unsigned(blocks), kThreads, 0, stream>>>(o1, lse1, o2, lse2, B, S, H, D);
  else
    attention_merge_kernel<false><<<unsigned(blocks), kThreads, 0, stream>>>(o1, lse1, o2, lse2, B, S, H, D);
  return cudaGetLastError();
}

}  // namespace vgen::kern
