// The FP8 attention's workspace (attention_fp8.cuh): Q, K (e4m3 or INT8) and Vᵀ (e4m3) of every
// (batch, head) and their scales, written by the quantisation pass (attention_fp8_quant.cu), read by
// the kernels (attention_fp8.cu, attention_fp8_generic.cu). Internal to kernels/attention.
//   q8  [B·H, sq_pad, D]  INT8 or e4m3 (Fp8Qk), rows ≥ Sq zero   sq  [B·H, nqb] dequantisation scales
//   k8  [B·H, sk_pad, D]  the same of k − mean, rows ≥ nk zero    sk  [B·H, nkb]
//   vt8 [B·H, D, sk_pad]  e4m3 of v, keys ≥ nk zero; within each 16 keys the column order is
//                         fp8_vt_column's (the wgmma P·V's register layout)   sv, vmul [B·H, D]
//   km  [B·H, D] key mean; qkm [B·H, Sq] scale·q·km (added to the LSE of the smoothed scores)
//   ksum, vmax [B·H, nkb, D]: per-128-key partial sums and maxima (the mean's deterministic order)
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_fp8_ref.h"

namespace vgen::kern::fp8attn {

struct Layout {
  int64_t B = 0, H = 0, Sq = 0, nk = 0, D = 0, sq_pad = 0, sk_pad = 0, nqb = 0, nkb = 0;
  size_t q8 = 0, k8 = 0, vt8 = 0, sq = 0, sk = 0, sv = 0, vmul = 0, km = 0, qkm = 0, ksum = 0, vmax = 0;
  size_t total = 0;
};

inline Layout layout(const AttnArgs& a) {
  Layout l;
  const int64_t blk = kAttnFp8Block;
  l.B = a.B, l.H = a.H, l.Sq = a.Sq, l.D = a.D;
  l.nk = a.num_valid_kv < 0 ? 0 : (a.num_valid_kv > a.Skv ? a.Skv : a.num_valid_kv);
  l.nqb = (a.Sq + blk - 1) / blk;
  l.nkb = (l.nk + blk - 1) / blk;
  l.sq_pad = l.nqb * blk;
  l.sk_pad = (l.nkb > 0 ? l.nkb : 1) * blk;
  const size_t bh = size_t(a.B * a.H);
  size_t off = 0;
  auto take = [&](size_t bytes) {
    const size_t at = off;
    off += (bytes + 255) / 256 * 256;
    return at;
  };
  l.q8 = take(bh * size_t(l.sq_pad * l.D));
  l.k8 = take(bh * size_t(l.sk_pad * l.D));
  l.vt8 = take(bh * size_t(l.sk_pad * l.D));
  l.sq = take(bh * size_t(l.nqb) * 4);
  l.sk = take(bh * size_t(l.nkb > 0 ? l.nkb : 1) * 4);
  l.sv = take(bh * size_t(l.D) * 4);
  l.vmul = take(bh * size_t(l.D) * 4);
  l.km = take(bh * size_t(l.D) * 4);
  l.qkm = take(bh * size_t(l.Sq) * 4);
  l.ksum = take(bh * size_t(l.nkb > 0 ? l.nkb : 1) * size_t(l.D) * 4);
  l.vmax = take(bh * size_t(l.nkb > 0 ? l.nkb : 1) * size_t(l.D) * 4);
  l.total = off;
  return l;
}

// Column of key j (within its 16-key group) in vt8. The P·V wgmma takes P from registers: thread t
// of a quad holds the scores of keys 2t, 2t+1, 8+2t, 9+2t of each 16 (the accumulator layout) and
// passes them as the A operand's k = 4t..4t+3, so Vᵀ stores key 2t+i at column 4t+i and key
// 8+2t+i at column 4t+2+i (i = 0, 1).
__host__ __device__ inline int fp8_vt_column(int j) {
  const int g = j & ~15, r = j & 15;
  return g + (r < 8 ? 4 * (r >> 1) + (r & 1) : 4 * ((r - 8) >> 1) + 2 + (r & 1));
}

// Launches the quantisation pass (attention_fp8_quant.cu); q/k/v bf16 [B,S,H,D] with strides.
cudaError_t launch_quant(const AttnArgs& a, Fp8Qk qk, const Layout& l, uint8_t* ws, cudaStream_t stream);

// Launches the CUDA-core kernel (attention_fp8_generic.cu: any D ≤ 128, the reference's loop order)
// on a workspace the quantisation pass has written.
cudaError_t launch_generic(const AttnArgs& a, Fp8Qk qk, const Layout& l, const uint8_t* ws, cudaStream_t stream);

}  // namespace vgen::kern::fp8attn
