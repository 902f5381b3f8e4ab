// The FP8 attention's quantisation pass (attention_fp8_layout.cuh, numerics attention_fp8_ref.h):
// key mean and V channel maxima per 128-key chunk, their deterministic totals, then K − mean (one
// scale per 128-key block) in INT8 or e4m3 (Fp8Qk), Vᵀ in e4m3 (one scale per channel), and Q (one
// scale per 128-query block) as K, with scale·q·mean per query. Memory-bound. Head dim 128 with
// 16-byte aligned rows (every Wan DiT call) takes the *128 kernels: 16-byte loads, each block's
// values held in registers between its maximum and its quantisation, so k and v are read twice from
// memory (the mean and V maxima need a whole pass first) and q once. Any other shape takes the
// scalar kernels; both compute the same values (the same sums in the same order, the same roundings).
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kernels/attention/attention_fp8_layout.cuh"
#include "kernels/common/elem_io.cuh"
#include "kernels/quant/e4m3_pack.cuh"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern::fp8attn {
namespace {

constexpr int kBlk = int(kAttnFp8Block);

struct QuantParams {
  const __nv_bfloat16 *q, *k, *v;
  int64_t qs, ks, vs;  // token strides (elements)
  int64_t Sq, Skv, H, D, nk, sq_pad, sk_pad, nqb, nkb;
  float scale;
  bool qk_int8;  // Q and K in INT8 (else e4m3)
  uint8_t *q8, *k8, *vt8;
  float *sq, *sk, *sv, *vmul, *km, *qkm, *ksum, *vmax;
};

__device__ __forceinline__ float ld(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ uint8_t e4m3(float x) {
  return uint8_t(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}
// Q and K: INT8 (int8_quant_mul / int8_round of kernels/quant/int8_ref.h; int8_bits) or e4m3; V: e4m3.
__device__ __forceinline__ float qk_top(bool i8) { return i8 ? kInt8QkMax : kFp8E4M3Max; }
__device__ __forceinline__ uint8_t qk8(bool i8, float x) { return i8 ? uint8_t(int8_bits(x)) : e4m3(x); }

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
#pragma unroll 8
  for (int64_t kb = 0; kb < p.nkb; ++kb) {
    total += p.ksum[(bh * p.nkb + kb) * p.D + d];
    vm = fmaxf(vm, p.vmax[(bh * p.nkb + kb) * p.D + d]);
  }
  p.km[bh * p.D + d] = p.nk > 0 ? total / float(p.nk) : 0.0f;
  p.sv[bh * p.D + d] = e4m3_dequant_mul(vm);
  p.vmul[bh * p.D + d] = e4m3_quant_mul(vm);
}

// grid (sk_pad / 128, H, B), block 256: k − mean in e4m3 or INT8 (one scale per block) and v in e4m3
// (per channel), Vᵀ through shared memory.
__global__ void kv_quant_kernel(const QuantParams p) {
  __shared__ float red[33];
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
  amax = dev::block_max(amax, red);
  const float mul = group_quant_mul(qk_top(p.qk_int8), amax);
  if (threadIdx.x == 0 && kb < p.nkb) p.sk[bh * p.nkb + kb] = group_dequant_mul(qk_top(p.qk_int8), amax);
  uint8_t* k8 = p.k8 + (bh * p.sk_pad + j0) * p.D;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t j = j0 + e / D;
    const int d = e % D;
    uint8_t kq = 0, vq = 0;
    if (j < p.nk) {
      const int64_t tok = int64_t(b) * p.Skv + j;
      kq = qk8(p.qk_int8, (ld(p.k + tok * p.ks + h * p.D + d) - km[d]) * mul);
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

// grid (nqb, H, B), block 256: Q in e4m3 or INT8 (one scale per block) and scale·q·km per query.
__global__ void q_quant_kernel(const QuantParams p) {
  __shared__ float red[33];
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, i0 = int64_t(qb) * kBlk;
  const int D = int(p.D), n = kBlk * D;
  float amax = 0.0f;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t i = i0 + e / D;
    if (i < p.Sq) amax = fmaxf(amax, fabsf(ld(p.q + (int64_t(b) * p.Sq + i) * p.qs + h * p.D + e % D)));
  }
  amax = dev::block_max(amax, red);
  const float mul = group_quant_mul(qk_top(p.qk_int8), amax);
  if (threadIdx.x == 0) p.sq[bh * p.nqb + qb] = group_dequant_mul(qk_top(p.qk_int8), amax);
  uint8_t* q8 = p.q8 + (bh * p.sq_pad + i0) * p.D;
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const int64_t i = i0 + e / D;
    q8[e] = i < p.Sq ? qk8(p.qk_int8, ld(p.q + (int64_t(b) * p.Sq + i) * p.qs + h * p.D + e % D) * mul) : uint8_t(0);
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

// ---- Head dim 128, 16-byte aligned rows ----
constexpr int kD = 128;

using dev::bf16x8_to_f32;
__device__ __forceinline__ uint32_t pack_int8x4(float a, float b, float c, float d) {
  return int8_bits(a) | int8_bits(b) << 8 | int8_bits(c) << 16 | int8_bits(d) << 24;
}
__device__ __forceinline__ uint2 pack8_qk(bool i8, const float (&f)[8], float mul) {
  if (!i8) return e4m3_pack8(f, mul);
  return make_uint2(pack_int8x4(f[0] * mul, f[1] * mul, f[2] * mul, f[3] * mul),
                    pack_int8x4(f[4] * mul, f[5] * mul, f[6] * mul, f[7] * mul));
}

// This thread's 16 bytes of rows row0 + 16·i (i < 8) of a [rows, stride] bf16 slab; rows ≥ n are 0.
__device__ __forceinline__ void load_rows8(const __nv_bfloat16* base, int64_t stride, int64_t row0, int64_t n,
                                           uint4 (&r)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = row0 + 16 * i;
    r[i] = row < n ? *reinterpret_cast<const uint4*>(base + row * stride) : make_uint4(0, 0, 0, 0);
  }
}

// grid (nkb, H, B), block 128: warps 0-1 sum two key channels per thread over the chunk (in key
// order, as the scalar kernel), warps 2-3 take two V channels' maxima; 8 rows in flight per thread.
__global__ void kv_stats128_kernel(const QuantParams p) {
  const int kb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const bool is_k = threadIdx.x < 64;
  const int d = 2 * (threadIdx.x & 63);
  const int64_t bh = int64_t(b) * p.H + h, j0 = int64_t(kb) * kBlk;
  const int n = int((j0 + kBlk < p.nk ? j0 + kBlk : p.nk) - j0);
  const int64_t stride = is_k ? p.ks : p.vs;
  const __nv_bfloat16* src = (is_k ? p.k : p.v) + (int64_t(b) * p.Skv + j0) * stride + h * kD + d;
  float s0 = 0.0f, s1 = 0.0f, m0 = 0.0f, m1 = 0.0f;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    float2 x[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) x[u] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + (j + u) * stride));
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      s0 += x[u].x, s1 += x[u].y;
      m0 = fmaxf(m0, fabsf(x[u].x)), m1 = fmaxf(m1, fabsf(x[u].y));
    }
  }
  for (; j < n; ++j) {
    const float2 x = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + j * stride));
    s0 += x.x, s1 += x.y;
    m0 = fmaxf(m0, fabsf(x.x)), m1 = fmaxf(m1, fabsf(x.y));
  }
  float* dst = (is_k ? p.ksum : p.vmax) + (bh * p.nkb + kb) * kD + d;
  *reinterpret_cast<float2*>(dst) = is_k ? make_float2(s0, s1) : make_float2(m0, m1);
}

// grid (sk_pad / 128, H, B), block 256: thread t holds channels 8·(t % 16) .. +7 of rows t / 16 + 16·i
// (i < 8) of the block, for k and for v. K: e4m3 of k − mean with the block's scale; V: e4m3 per
// channel, staged in shared memory [key][d] and written out as Vᵀ rows in fp8_vt_column order.
__global__ void __launch_bounds__(256, 2) kv_quant128_kernel(const QuantParams p) {
  __shared__ float red[33];
  __shared__ __align__(16) uint8_t vtile[kBlk][kD + 8];  // +8: rows stay 8-byte aligned, fewer bank conflicts
  const int kb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, j0 = int64_t(kb) * kBlk;
  const int c8 = 8 * (threadIdx.x & 15), r0 = threadIdx.x >> 4;
  float km[8], vmul[8];
  dev::load8<float>(p.km + bh * kD + c8, km);
  dev::load8<float>(p.vmul + bh * kD + c8, vmul);
  uint4 r8[8];  // k rows, then v rows (one block's k and v together would spill)
  load_rows8(p.k + int64_t(b) * p.Skv * p.ks + h * kD + c8, p.ks, j0 + r0, p.nk, r8);
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (j0 + r0 + 16 * i >= p.nk) continue;
    float f[8];
    bf16x8_to_f32(r8[i], f);
#pragma unroll
    for (int c = 0; c < 8; ++c) amax = fmaxf(amax, fabsf(f[c] - km[c]));
  }
  amax = dev::block_max(amax, red);
  const float mul = group_quant_mul(qk_top(p.qk_int8), amax);
  if (threadIdx.x == 0 && kb < p.nkb) p.sk[bh * p.nkb + kb] = group_dequant_mul(qk_top(p.qk_int8), amax);
  uint8_t* k8 = p.k8 + (bh * p.sk_pad + j0) * kD;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = r0 + 16 * i;
    uint2 kq = make_uint2(0, 0);
    if (j0 + r < p.nk) {
      float f[8];
      bf16x8_to_f32(r8[i], f);
#pragma unroll
      for (int c = 0; c < 8; ++c) f[c] -= km[c];
      kq = pack8_qk(p.qk_int8, f, mul);
    }
    *reinterpret_cast<uint2*>(k8 + r * kD + c8) = kq;
  }
  load_rows8(p.v + int64_t(b) * p.Skv * p.vs + h * kD + c8, p.vs, j0 + r0, p.nk, r8);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    float g[8];
    bf16x8_to_f32(r8[i], g);  // rows ≥ nk are zeros: e4m3 0
#pragma unroll
    for (int c = 0; c < 8; ++c) g[c] *= vmul[c];
    *reinterpret_cast<uint2*>(&vtile[r0 + 16 * i][c8]) = e4m3_pack8(g, 1.0f);
  }
  __syncthreads();
  // Vᵀ: item w = (channel quad dq, column word cw); the word's 4 keys (fp8_vt_column's inverse:
  // columns 4t..4t+3 of a 16-group hold keys 2t, 2t+1, 8+2t, 9+2t) read 4 channels each, then a
  // 4×4 byte transpose gives one word of each of the 4 channels' rows.
  uint8_t* vt = p.vt8 + bh * kD * p.sk_pad + j0;
  for (int w = threadIdx.x; w < (kD / 4) * (kBlk / 4); w += blockDim.x) {
    const int cw = w % (kBlk / 4), dq = w / (kBlk / 4);
    const int g = (4 * cw) & ~15, t = cw & 3;
    const uint32_t a = *reinterpret_cast<const uint32_t*>(&vtile[g + 2 * t][4 * dq]);
    const uint32_t bb = *reinterpret_cast<const uint32_t*>(&vtile[g + 2 * t + 1][4 * dq]);
    const uint32_t c = *reinterpret_cast<const uint32_t*>(&vtile[g + 8 + 2 * t][4 * dq]);
    const uint32_t e = *reinterpret_cast<const uint32_t*>(&vtile[g + 9 + 2 * t][4 * dq]);
    const uint32_t ab_lo = __byte_perm(a, bb, 0x5140), ab_hi = __byte_perm(a, bb, 0x7362);  // a0 b0 a1 b1 | a2 b2 a3 b3
    const uint32_t ce_lo = __byte_perm(c, e, 0x5140), ce_hi = __byte_perm(c, e, 0x7362);
    const uint32_t out[4] = {__byte_perm(ab_lo, ce_lo, 0x5410), __byte_perm(ab_lo, ce_lo, 0x7632),
                             __byte_perm(ab_hi, ce_hi, 0x5410), __byte_perm(ab_hi, ce_hi, 0x7632)};
#pragma unroll
    for (int u = 0; u < 4; ++u) *reinterpret_cast<uint32_t*>(vt + int64_t(4 * dq + u) * p.sk_pad + 4 * cw) = out[u];
  }
}

// grid (nqb, H, B), block 256: rows and channels as kv_quant128; scale·q·km per row summed over its
// 16 threads by a fixed shuffle tree.
__global__ void __launch_bounds__(256) q_quant128_kernel(const QuantParams p) {
  __shared__ float red[33];
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, i0 = int64_t(qb) * kBlk;
  const int c8 = 8 * (threadIdx.x & 15), r0 = threadIdx.x >> 4;
  uint4 qr[8];
  load_rows8(p.q + int64_t(b) * p.Sq * p.qs + h * kD + c8, p.qs, i0 + r0, p.Sq, qr);
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    float f[8];
    bf16x8_to_f32(qr[i], f);
#pragma unroll
    for (int c = 0; c < 8; ++c) amax = fmaxf(amax, fabsf(f[c]));
  }
  amax = dev::block_max(amax, red);
  const float mul = group_quant_mul(qk_top(p.qk_int8), amax);
  if (threadIdx.x == 0) p.sq[bh * p.nqb + qb] = group_dequant_mul(qk_top(p.qk_int8), amax);
  float km[8];
  dev::load8<float>(p.km + bh * kD + c8, km);
  uint8_t* q8 = p.q8 + (bh * p.sq_pad + i0) * kD;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = r0 + 16 * i;
    float f[8];
    bf16x8_to_f32(qr[i], f);
    *reinterpret_cast<uint2*>(q8 + r * kD + c8) = i0 + r < p.Sq ? pack8_qk(p.qk_int8, f, mul) : make_uint2(0, 0);
    float acc = 0.0f;
#pragma unroll
    for (int c = 0; c < 8; ++c) acc = fmaf(f[c], km[c], acc);
#pragma unroll
    for (int o = 8; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 15) == 0 && i0 + r < p.Sq) p.qkm[bh * p.Sq + i0 + r] = p.scale * acc;
  }
}

bool fast128(const AttnArgs& a, const AttnStrides& st) {
  return a.D == kD && dev::aligned16(a.q) && dev::aligned16(a.k) && dev::aligned16(a.v) && st.q % 8 == 0 &&
         st.k % 8 == 0 && st.v % 8 == 0;
}

}  // namespace

cudaError_t launch_quant(const AttnArgs& a, Fp8Qk qk, const Layout& l, uint8_t* ws, cudaStream_t stream) {
  const AttnStrides st = attn_strides(a);
  QuantParams p;
  p.q = static_cast<const __nv_bfloat16*>(a.q);
  p.k = static_cast<const __nv_bfloat16*>(a.k);
  p.v = static_cast<const __nv_bfloat16*>(a.v);
  p.qs = st.q, p.ks = st.k, p.vs = st.v;
  p.Sq = a.Sq, p.Skv = a.Skv, p.H = a.H, p.D = a.D, p.nk = l.nk;
  p.sq_pad = l.sq_pad, p.sk_pad = l.sk_pad, p.nqb = l.nqb, p.nkb = l.nkb;
  p.scale = a.scale;
  p.qk_int8 = qk == Fp8Qk::kInt8;
  p.q8 = ws + l.q8, p.k8 = ws + l.k8, p.vt8 = ws + l.vt8;
  auto f = [&](size_t off) { return reinterpret_cast<float*>(ws + off); };
  p.sq = f(l.sq), p.sk = f(l.sk), p.sv = f(l.sv), p.vmul = f(l.vmul), p.km = f(l.km), p.qkm = f(l.qkm);
  p.ksum = f(l.ksum), p.vmax = f(l.vmax);
  const unsigned H = unsigned(a.H), B = unsigned(a.B);
  const bool fast = fast128(a, st);
  if (l.nkb > 0) {
    if (fast)
      kv_stats128_kernel<<<dim3(unsigned(l.nkb), H, B), 128, 0, stream>>>(p);
    else
      kv_stats_kernel<<<dim3(unsigned(l.nkb), H, B), 128, 0, stream>>>(p);
  }
  kv_finish_kernel<<<dim3(H, B), 128, 0, stream>>>(p);
  if (fast) {
    kv_quant128_kernel<<<dim3(unsigned(l.sk_pad / kBlk), H, B), 256, 0, stream>>>(p);
    q_quant128_kernel<<<dim3(unsigned(l.nqb), H, B), 256, 0, stream>>>(p);
  } else {
    kv_quant_kernel<<<dim3(unsigned(l.sk_pad / kBlk), H, B), 256, 0, stream>>>(p);
    q_quant_kernel<<<dim3(unsigned(l.nqb), H, B), 256, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace vgen::kern::fp8attn
