// The FP8 attention's quantisation pass (attention_fp8_layout.cuh, numerics attention_fp8_ref.h):
// key mean and V channel maxima per 128-key chunk, their deterministic totals, then e4m3 K − mean
// and Vᵀ (one scale per 128-key block / per channel) and e4m3 Q (one scale per 128-query block)
// with scale·q·mean per query. Memory-bound: each of q, k, v is read twice (the block maximum
// first), from L2 the second time.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/attention/attention_fp8_layout.cuh"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern::fp8attn {
namespace {

constexpr int kBlk = int(kAttnFp8Block);

struct QuantParams {
  const __nv_bfloat16 *q, *k, *v;
  int64_t qs, ks, vs;  // token strides (elements)
  int64_t Sq, Skv, H, D, nk, sq_pad, sk_pad, nqb, nkb;
  float scale;
  uint8_t *q8, *k8, *vt8;
  float *sq, *sk, *sv, *vmul, *km, *qkm, *ksum, *vmax;
};

__device__ __forceinline__ float ld(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ uint8_t e4m3(float x) {
  return uint8_t(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}
__device__ __forceinline__ float qmul(float amax) { return (amax >= kFp8MinAmax && amax < 3.0e38f) ? kFp8E4M3Max / amax : 1.0f; }
__device__ __forceinline__ float dqmul(float amax) { return (amax >= kFp8MinAmax && amax < 3.0e38f) ? amax / kFp8E4M3Max : 1.0f; }

// Block-wide max of non-negative values (blockDim.x a multiple of 32, at most 1024).
__device__ float block_max(float x, float* red) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  const int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) red[w] = x;
  __syncthreads();
  float m = 0.0f;
  for (int i = 0; i < nw; ++i) m = fmaxf(m, red[i]);
  return m;
}

// grid (nkb, H, B), block 128: thread d sums its chunk's keys and takes the V maximum.
__global__ void kv_stats_kernel(const QuantParams p) {
  const int kb = blockIdx.x, h = blockIdx.y, b = blockIdx.z, d = threadIdx.x;
  if (d >= p.D) return;
  const int64_t bh = int64_t(b) * p.H + h, j0 = int64_t(kb) * kBlk;
  const int64_t j1 = j0 + kBlk < p.nk ? j0 + kBlk : p.nk;
  float sum = 0.0f, vm = 0.0f;
  for (int64_t j = j0; j < j1; ++j) {
    sum += ld(p.k + (int64_t(b) * p.Skv + j) * p.ks + h * p.D + d);
    vm = fmaxf(vm, fabsf(ld(p.v + (int64_t(b) * p.Skv + j) * p.vs + h * p.D + d)));
  }
  p.ksum[(bh * p.nkb + kb) * p.D + d] = sum;
  p.vmax[(bh * p.nkb + kb) * p.D + d] = vm;
}

// grid (H, B), block 128: the chunks' totals in chunk order.
__global__ void kv_finish_kernel(const QuantParams p) {
  const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  if (d >= p.D) return;
  const int64_t bh = int64_t(b) * p.H + h;
  float total = 0.0f, vm = 0.0f;
  for (int64_t kb = 0; kb < p.nkb; ++kb) {
    total += p.ksum[(bh * p.nkb + kb) * p.D + d];
    vm = fmaxf(vm, p.vmax[(bh * p.nkb + kb) * p.D + d]);
  }
  p.km[bh * p.D + d] = p.nk > 0 ? total / float(p.nk) : 0.0f;
  p.sv[bh * p.D + d] = dqmul(vm);
  p.vmul[bh * p.D + d] = qmul(vm);
}

// grid (sk_pad / 128, H, B), block 256: e4m3 of k − mean (one scale per block) and of v (per
// channel), Vᵀ through shared memory.
__global__ void kv_quant_kernel(const QuantParams p) {
  __shared__ float red[32];
  __shared__ uint8_t vtile[kBlk][kAttnMaxHeadDim + 4];  // [key][d]; +4 spreads the column reads
  const int kb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, j0 = int64_t(kb) * kBlk;
  const int D = int(p.D), n = kBlk * D;
  const float* km = p.km + bh * p.D;
  float amax = 0.0f;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t j = j0 + e / D;
    if (j < p.nk) amax = fmaxf(amax, fabsf(ld(p.k + (int64_t(b) * p.Skv + j) * p.ks + h * p.D + e % D) - km[e % D]));
  }
  amax = block_max(amax, red);
  const float mul = qmul(amax);
  if (threadIdx.x == 0 && kb < p.nkb) p.sk[bh * p.nkb + kb] = dqmul(amax);
  uint8_t* k8 = p.k8 + (bh * p.sk_pad + j0) * p.D;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t j = j0 + e / D;
    const int d = e % D;
    uint8_t kq = 0, vq = 0;
    if (j < p.nk) {
      const int64_t tok = int64_t(b) * p.Skv + j;
      kq = e4m3((ld(p.k + tok * p.ks + h * p.D + d) - km[d]) * mul);
      vq = e4m3(ld(p.v + tok * p.vs + h * p.D + d) * p.vmul[bh * p.D + d]);
    }
    k8[e] = kq;
    vtile[e / D][d] = vq;
  }
  __syncthreads();
  uint8_t* vt = p.vt8 + bh * p.D * p.sk_pad + j0;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int d = e / kBlk, c = e % kBlk;  // column c of row d holds key fp8_vt_column⁻¹(c)
    // Inverse of fp8_vt_column within 16: column 4t+i holds key 2t+i (i < 2) or 8+2t+i−2.
    const int g = c & ~15, r = c & 15, t = r >> 2, i = r & 3;
    const int key = g + (i < 2 ? 2 * t + i : 8 + 2 * t + i - 2);
    vt[int64_t(d) * p.sk_pad + c] = vtile[key][d];
  }
}

// grid (nqb, H, B), block 256: e4m3 Q (one scale per block) and scale·q·km per query.
__global__ void q_quant_kernel(const QuantParams p) {
  __shared__ float red[32];
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, i0 = int64_t(qb) * kBlk;
  const int D = int(p.D), n = kBlk * D;
  float amax = 0.0f;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t i = i0 + e / D;
    if (i < p.Sq) amax = fmaxf(amax, fabsf(ld(p.q + (int64_t(b) * p.Sq + i) * p.qs + h * p.D + e % D)));
  }
  amax = block_max(amax, red);
  const float mul = qmul(amax);
  if (threadIdx.x == 0) p.sq[bh * p.nqb + qb] = dqmul(amax);
  uint8_t* q8 = p.q8 + (bh * p.sq_pad + i0) * p.D;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t i = i0 + e / D;
    q8[e] = i < p.Sq ? e4m3(ld(p.q + (int64_t(b) * p.Sq + i) * p.qs + h * p.D + e % D) * mul) : uint8_t(0);
  }
  // scale·q·km: one warp per query row, lanes over d, a fixed reduction tree.
  const float* km = p.km + bh * p.D;
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  for (int r = w; r < kBlk; r += nw) {
    const int64_t i = i0 + r;
    if (i >= p.Sq) break;
    const __nv_bfloat16* qi = p.q + (int64_t(b) * p.Sq + i) * p.qs + h * p.D;
    float acc = 0.0f;
    for (int d = lane; d < D; d += 32) acc += ld(qi + d) * km[d];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) p.qkm[bh * p.Sq + i] = p.scale * acc;
  }
}

}  // namespace

cudaError_t launch_quant(const AttnArgs& a, const Layout& l, uint8_t* ws, cudaStream_t stream) {
  const AttnStrides st = attn_strides(a);
  QuantParams p;
  p.q = static_cast<const __nv_bfloat16*>(a.q);
  p.k = static_cast<const __nv_bfloat16*>(a.k);
  p.v = static_cast<const __nv_bfloat16*>(a.v);
  p.qs = st.q, p.ks = st.k, p.vs = st.v;
  p.Sq = a.Sq, p.Skv = a.Skv, p.H = a.H, p.D = a.D, p.nk = l.nk;
  p.sq_pad = l.sq_pad, p.sk_pad = l.sk_pad, p.nqb = l.nqb, p.nkb = l.nkb;
  p.scale = a.scale;
  p.q8 = ws + l.q8, p.k8 = ws + l.k8, p.vt8 = ws + l.vt8;
  auto f = [&](size_t off) { return reinterpret_cast<float*>(ws + off); };
  p.sq = f(l.sq), p.sk = f(l.sk), p.sv = f(l.sv), p.vmul = f(l.vmul), p.km = f(l.km), p.qkm = f(l.qkm);
  p.ksum = f(l.ksum), p.vmax = f(l.vmax);
  const unsigned H = unsigned(a.H), B = unsigned(a.B);
  if (l.nkb > 0) kv_stats_kernel<<<dim3(unsigned(l.nkb), H, B), 128, 0, stream>>>(p);
  kv_finish_kernel<<<dim3(H, B), 128, 0, stream>>>(p);
  kv_quant_kernel<<<dim3(unsigned(l.sk_pad / kBlk), H, B), 256, 0, stream>>>(p);
  q_quant_kernel<<<dim3(unsigned(l.nqb), H, B), 256, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace vgen::kern::fp8attn
