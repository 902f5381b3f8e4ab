// CPU reference of the FP8 self-attention (attention_fp8.cuh), fp32 math on e4m3-rounded values
// (kernels/quant/fp8_e4m3_ref.h), same layout and contract as attention_ref:
//   q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D], lse [B,H,Sq] (may be null); keys j >= nv
//   (nv = num_valid_kv clamped to [0, Skv]) get zero weight; with nv = 0 a row is 0, lse −inf.
// Per (b, h):
//   km[d] = mean_{j<nv} k[j,d];  k'[j] = k[j] − km            (softmax is invariant to it)
//   Q, k' in blocks of 128 tokens: a = max |x| over the block (all D), and by `qk`
//     kE4m3 (default): x8 = e4m3(x · 448/a), scale a/448 (fp8_quant_mul / fp8_dequant_mul)
//     kInt8: x8 = rint(x · 127/a) in [−127, 127], scale a/127 (int8_quant_mul / int8_dequant_mul;
//       SageAttention's Q·Kᵀ: 7 bits over the block's range, not 3 per value)
//     (a block of zeros has scale 1)
//   V per channel d over the nv keys, the same way: sv[d]
//   s[i,j] = (Σ_d q8·k8) · sq[i/128] · sk[j/128] · scale  (INT8: the integer sum, exact)
//   online softmax over 128-key tiles in order: m = running max, p = exp(s − m) (fp32),
//     l = Σ p (fp32 p), acc[d] = Σ e4m3(p · 448) · v8[j,d] (rescaled by exp(m_old − m) per tile)
//   out[i,d] = acc[d] · sv[d] / (448 · l);  lse[i] = m + log(l) + scale · Σ_d q[i,d] · km[d]
//   kInt8: the same softmax in the device kernel's form (attention_fp8_ref.cpp's Int8Tile): log2
//     units, the score unit sq·sk·scale·log2 e cut to 22 significant bits, each tile's maximum raised
//     to the grid on which the kernel's softmax constant is exact (still a bound: outputs and LSE
//     unchanged but for the e4m3 rounding of p·448)
// This function is also the CPU emulation of precision fp8 (the DiT's self-attention).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/int8_ref.h"

namespace vgen::kern {

// How Q and the smoothed K are stored for Q·Kᵀ (P·V is e4m3 either way).
enum class Fp8Qk : uint8_t { kE4m3, kInt8 };

// INT8 groups: kernels/quant/int8_ref.h (rint(x · 127/amax), clamped to ±127, NaN as 0).
constexpr float kInt8QkMax = kInt8Max;

constexpr int64_t kAttnFp8Block = 128;  // tokens per Q / K scale block, keys per softmax tile

// The softmax's constants, shared by this reference and the device kernels (attention_fp8.cu,
// attention_fp8_generic.cu). P is stored as e4m3(p·448), so p·448 = exp2(x + log2 448) in log2
// units. INT8 scores: the s32 sum i of a wgmma accumulator that starts at the bits of
// kInt8ScoreBase (2²³ + 2²²), read as a float, is kInt8ScoreBase + i exactly (|i| ≤ 128·127² < 2²²).
constexpr float kFp8Log2Of448 = 8.807354922057604f;
constexpr float kInt8ScoreBase = 12582912.0f;
constexpr uint32_t kInt8ScoreBits = 0x4B400000u;  // the bits of kInt8ScoreBase
static_assert(std::bit_cast<uint32_t>(kInt8ScoreBase) == kInt8ScoreBits);

void attention_fp8_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                       int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale,
                       Fp8Qk qk = Fp8Qk::kE4m3);

}  // namespace vgen::kern
