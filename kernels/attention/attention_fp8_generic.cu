// FP8 attention's CUDA-core kernel (attention_fp8.cuh): any head dim up to 128 (the tiny test
// models, D = 12; odd shapes), on the workspace of the quantisation pass, with the quantisation and
// softmax of the Hopper kernel (attention_fp8.cu) in the reference's loop order
// (attention_fp8_ref.h). One query row per thread: slow, and only used where the Hopper kernel
// does not apply.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>

#include "kernels/attention/attention_fp8.cuh"
#include "kernels/attention/attention_fp8_layout.cuh"
#include "kernels/attention/mma_bf16.cuh"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern::fp8attn {

namespace {

constexpr int kTile = int(kAttnFp8Block);  // query rows per block, keys per softmax tile

__device__ __forceinline__ float e4m3_to_f32(uint8_t v) {
  __nv_fp8_e4m3 x;
  x.__x = v;
  return float(x);
}

struct GenericParams {
  void* out;
  float* lse;
  int64_t o_stride, Sq, H, D, nk, sq_pad, sk_pad, nqb, nkb;
  float scale;
  bool qk_int8;
  const uint8_t *q8, *k8, *vt8;
  const float *sq, *sk, *sv, *qkm;
};

__device__ __forceinline__ float qk_to_f32(bool i8, uint8_t v) { return i8 ? float(int8_t(v)) : e4m3_to_f32(v); }

// grid (nqb, H, B), block 128: one query row per thread, the reference's loop order (any D ≤ 128).
__global__ void attn_fp8_generic_kernel(const GenericParams p) {
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int64_t bh = int64_t(b) * p.H + h, i = int64_t(qb) * kTile + threadIdx.x;
  if (i >= p.Sq) return;
  const int D = int(p.D);
  __nv_bfloat16* out = static_cast<__nv_bfloat16*>(p.out) + (int64_t(b) * p.Sq + i) * p.o_stride + h * p.D;
  float* lse = p.lse ? p.lse + bh * p.Sq + i : nullptr;
  if (p.nk == 0) {
    for (int d = 0; d < D; ++d) out[d] = __float2bfloat16(0.0f);
    if (lse) *lse = -INFINITY;
    return;
  }
  float q[kAttnMaxHeadDim], acc[kAttnMaxHeadDim], sc[kTile];
  const uint8_t* qrow = p.q8 + (bh * p.sq_pad + i) * p.D;
  for (int d = 0; d < D; ++d) q[d] = qk_to_f32(p.qk_int8, qrow[d]), acc[d] = 0.0f;
  const float sqi = p.sq[bh * p.nqb + qb];
  // e4m3: natural units, p without the 448. INT8: the Hopper kernel's form (log2 units, p·448, the
  // exact softmax constant; attention_fp8_ref.cpp's Int8Tile).
  const bool i8 = p.qk_int8;
  const float pmul = i8 ? 1.0f : kFp8E4M3Max;
  float m = -INFINITY, l = 0.0f;
  for (int64_t c = 0; c < p.nk; c += kTile) {
    const int n = int(min(int64_t(kTile), p.nk - c));
    const float skc = p.sk[bh * p.nkb + c / kTile], f = sqi * skc * p.scale;
    float mt = -INFINITY;
    for (int j = 0; j < n; ++j) {
      const uint8_t* krow = p.k8 + (bh * p.sk_pad + c + j) * p.D;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot += q[d] * qk_to_f32(i8, krow[d]);  // INT8: exact
      sc[j] = i8 ? dot : dot * f;
      mt = fmaxf(mt, sc[j]);
    }
    float mn, off = 0.0f, sl2 = 0.0f;
    if (i8) {
      sl2 = __uint_as_float(__float_as_uint(sqi * (p.scale * mma::kLog2e) * skc) & ~3u);
      const float base = kInt8ScoreBase * sl2;
      off = __fadd_ru(base, fmaxf(m, fmaf(mt, sl2, -kFp8Log2Of448)));
      mn = off - base;
    } else {
      mn = fmaxf(m, mt);
    }
    const float corr = i8 ? exp2f(m - mn) : expf(m - mn);
    m = mn;
    l *= corr;
    for (int d = 0; d < D; ++d) acc[d] *= corr;
    for (int j = 0; j < n; ++j) {
      const float pj = i8 ? exp2f(fmaf(kInt8ScoreBase + sc[j], sl2, -off)) : expf(sc[j] - m);
      l += pj;
      const float p8 = e4m3_to_f32(uint8_t(__nv_cvt_float_to_fp8(pj * pmul, __NV_SATFINITE, __NV_E4M3)));
      const int64_t col = c + fp8_vt_column(j);
      for (int d = 0; d < D; ++d) acc[d] += p8 * e4m3_to_f32(p.vt8[(bh * p.D + d) * p.sk_pad + col]);
    }
  }
  for (int d = 0; d < D; ++d) out[d] = __float2bfloat16(acc[d] * p.sv[bh * p.D + d] / (pmul * l));
  if (lse) *lse = (i8 ? (m + log2f(l)) * mma::kLn2 : m + logf(l)) + p.qkm[bh * p.Sq + i];
}

}  // namespace

cudaError_t launch_generic(const AttnArgs& a, Fp8Qk qk, const Layout& l, const uint8_t* ws, cudaStream_t stream) {
  const AttnStrides st = attn_strides(a);
  auto f = [&](size_t off) { return reinterpret_cast<const float*>(ws + off); };
  GenericParams g;
  g.out = a.out, g.lse = a.lse, g.o_stride = st.o, g.Sq = a.Sq, g.H = a.H, g.D = a.D, g.nk = l.nk;
  g.sq_pad = l.sq_pad, g.sk_pad = l.sk_pad, g.nqb = l.nqb, g.nkb = l.nkb, g.scale = a.scale;
  g.qk_int8 = qk == Fp8Qk::kInt8;
  g.q8 = ws + l.q8, g.k8 = ws + l.k8, g.vt8 = ws + l.vt8;
  g.sq = f(l.sq), g.sk = f(l.sk), g.sv = f(l.sv), g.qkm = f(l.qkm);
  attn_fp8_generic_kernel<<<dim3(unsigned(l.nqb), unsigned(a.H), unsigned(a.B)), kTile, 0, stream>>>(g);
  return cudaGetLastError();
}

}  // namespace vgen::kern::fp8attn
