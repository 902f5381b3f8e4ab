// MXFP8 on the host (OCP Microscaling Formats v1.0, §6.3 "conversion"): E4M3 elements with one UE8M0
// scale per 32 consecutive elements of a row (along K). Per block:
//   X = 2^(floor(log2(amax)) − 8)   (emax of E4M3 is 8; amax the block's largest magnitude),
//   clamped to 2^-127..2^127, stored as its biased exponent (UE8M0);
//   P_i = e4m3(V_i / X): round to nearest even, saturating to ±448 (the spec's clamp of normal
//   numbers; amax/X lies in [256, 512), so values above 448·X of the top binade saturate).
// Special values: a block holding a NaN or an Inf gets the NaN scale (0xFF) and zero elements, so
// the whole block reads back NaN (the spec: a NaN X makes every element of the block NaN); a block
// of zeros gets scale 2^-127 and zero elements. The last block of a row may be short (K % 32): it
// covers the remaining elements only (the device pads K with zeros to whole blocks, which changes
// no scale). Plain layout here: scales [rows, ceil(K/32)] row-major; swizzle_scales_ref makes the
// GEMM's layout (blockscale_format.h).
#pragma once
#include <cstdint>

namespace vgen::kern {

inline int64_t mxfp8_kblocks(int64_t K) { return (K + 31) / 32; }

// x [rows, K] f32 (row stride ldx) → q [rows, K] e4m3 bytes, scales [rows, mxfp8_kblocks(K)] UE8M0.
void mxfp8_quantize_ref(const float* x, int64_t rows, int64_t K, int64_t ldx, uint8_t* q, uint8_t* scales);
// q, scales as above → x [rows, K] f32 (e4m3 · 2^e; NaN for a NaN scale).
void mxfp8_dequantize_ref(const uint8_t* q, const uint8_t* scales, int64_t rows, int64_t K, float* x);
// Quantise and read back in place: x [rows, K] (dense) becomes what MXFP8 stores of it (the CPU
// emulation of an MXFP8 operand).
void mxfp8_fake_quant_ref(float* x, int64_t rows, int64_t K);

// scales [rows, kblocks] row-major → out [bs_scales_bytes(rows, kblocks)] in cuBLASLt's 128×4
// tiled layout, padding bytes `pad` (0 for UE8M0 and E4M3 alike: padded rows and K are zeros).
void swizzle_scales_ref(const uint8_t* scales, int64_t rows, int64_t kblocks, uint8_t* out, uint8_t pad = 0);
// The inverse: the swizzled layout → scales [rows, kblocks] row-major.
void unswizzle_scales_ref(const uint8_t* swizzled, int64_t rows, int64_t kblocks, uint8_t* scales);

}  // namespace vgen::kern
