// The element and scale codes of the block-scaled formats, host and device alike (header-only,
// plain arithmetic so the CPU references and the CUDA kernels encode bit-identically):
//   UE8M0 (OCP MX v1.0 §5.4.1): an unsigned power of two 2^(b − 127), b in 0..254; 0xFF is NaN.
//   E2M1 (OCP MX v1.0 §5.3.3, NVFP4's elements): 1 sign, 2 exponent bits (bias 1), 1 mantissa bit:
//     ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no Inf, no NaN.
// And the 128×4 tiled scale-factor layout cuBLASLt reads for CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
// and VEC16_UE4M3 (cuBLAS docs "1D Block Scaling Factors Layout"): the scales of an operand with
// `rows` rows (M of A, N of B) and `kblocks` blocks along K are padded to multiples of 128 rows and 4
// blocks; each 128×4 tile is 512 contiguous bytes, tiles in row-major order of (row/128, kb/4); inside
// a tile, row r (of 128) and block c (of 4) sit at (r % 32)·16 + (r / 32)·4 + c.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define VGEN_BS_HD __host__ __device__ __forceinline__
#else
#define VGEN_BS_HD inline
#endif

namespace vgen::kern {

constexpr int kMxfp8Block = 32;     // MXFP8: elements per UE8M0 scale, along K
constexpr int kNvfp4Block = 16;     // NVFP4: elements per E4M3 scale, along K
constexpr int kMxE4m3Emax = 8;      // emax_elem of E4M3 (448 = 1.75 · 2^8)
constexpr float kE2m1Max = 6.0f;
constexpr uint8_t kUe8m0Nan = 0xFF;

VGEN_BS_HD float bs_bits_float(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

// 2^e as a float for e in -126..127 (a normal number: exact).
VGEN_BS_HD float bs_exp2i(int e) { return bs_bits_float(uint32_t(e + 127) << 23); }

VGEN_BS_HD float ue8m0_decode(uint8_t b) {
  if (b == kUe8m0Nan) return bs_bits_float(0x7fc00000u);
  if (b == 0) return bs_bits_float(0x00400000u);  // 2^-127: the one subnormal scale
  return bs_exp2i(int(b) - 127);
}

// floor(log2(a)) of a finite a > 0 (subnormals included): the exponent field, or the top bit of a
// subnormal's mantissa.
VGEN_BS_HD int bs_floor_log2(float a) {
  uint32_t bits;
  memcpy(&bits, &a, 4);
  const int e = int((bits >> 23) & 0xFF);
  if (e) return e - 127;
  int m = int(bits & 0x7FFFFF), top = -1;
  while (m) m >>= 1, ++top;
  return top - 149;
}

// The MXFP8 scale exponent of a block whose largest finite magnitude is amax (OCP MX v1.0 §6.3:
// X = 2^(floor(log2(amax)) − emax_elem)), clamped to UE8M0's −127..127; a block of zeros gets
// 2^-127 (its elements encode as zeros under any scale).
VGEN_BS_HD int mxfp8_scale_exp(float amax) {
  if (!(amax > 0.0f)) return -127;
  const int e = bs_floor_log2(amax) - kMxE4m3Emax;
  return e < -127 ? -127 : e > 127 ? 127 : e;
}

// E2M1 code (sign bit 3) of v, round to nearest even with saturation to ±6; NaN encodes +0 (the
// format has none; the block's scale carries it, see nvfp4_ref.h).
VGEN_BS_HD uint8_t e2m1_encode(float v) {
  if (!(v == v)) return 0;
  uint32_t bits;
  memcpy(&bits, &v, 4);
  const uint8_t sign = uint8_t((bits >> 28) & 0x8u);  // -0 keeps its sign, as e4m3's encoder does
  const float a = bs_bits_float(bits & 0x7FFFFFFFu);
  // Midpoints between neighbours; a tie goes to the even code (mantissa bit 0).
  const uint8_t c = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 : a <= 2.5f ? 4
                  : a < 3.5f  ? 5 : a <= 5.0f ? 6 : 7;
  return uint8_t(sign | c);
}

VGEN_BS_HD float e2m1_decode(uint8_t c) {
  const int m = c & 0x7;
  const float mag = m < 2 ? 0.5f * m : m < 4 ? 1.0f + 0.5f * (m - 2) : m < 6 ? 2.0f + (m - 4) : m == 6 ? 4.0f : 6.0f;
  return (c & 0x8) ? -mag : mag;
}

// The value of e4m3 code b (fp8_e4m3_decode's, usable on the device): S.EEEE.MMM with bias 7,
// subnormals below 2^-6, S.1111.111 NaN.
VGEN_BS_HD float e4m3_decode_hd(uint8_t b) {
  const int e = (b >> 3) & 0xF, m = b & 0x7;
  if (e == 0xF && m == 0x7) return bs_bits_float(0x7fc00000u);
  const float mag = e == 0 ? float(m) * bs_exp2i(-9) : (1.0f + float(m) * 0.125f) * bs_exp2i(e - 7);
  return (b & 0x80) ? -mag : mag;
}

// ---- the cuBLASLt scale-factor layout ----------------------------------------------------------

VGEN_BS_HD int64_t bs_padded_rows(int64_t rows) { return (rows + 127) / 128 * 128; }
VGEN_BS_HD int64_t bs_padded_kblocks(int64_t kblocks) { return (kblocks + 3) / 4 * 4; }
// Bytes of the swizzled scales of a rows × kblocks operand.
VGEN_BS_HD int64_t bs_scales_bytes(int64_t rows, int64_t kblocks) {
  return bs_padded_rows(rows) * bs_padded_kblocks(kblocks);
}

// Offset of the scale of (row, kb) in the swizzled layout of an operand of `kblocks` blocks along K.
VGEN_BS_HD int64_t bs_scale_offset(int64_t row, int64_t kb, int64_t kblocks) {
  const int64_t tiles_k = bs_padded_kblocks(kblocks) / 4;
  const int64_t tile = (row / 128) * tiles_k + kb / 4;
  return tile * 512 + (row % 32) * 16 + ((row % 128) / 32) * 4 + kb % 4;
}

// The inverse: the (row, kb) stored at `offset` (padding included: row may reach the padded rows).
VGEN_BS_HD void bs_scale_position(int64_t offset, int64_t kblocks, int64_t* row, int64_t* kb) {
  const int64_t tiles_k = bs_padded_kblocks(kblocks) / 4;
  const int64_t tile = offset / 512, in = offset % 512;
  *row = (tile / tiles_k) * 128 + ((in % 16) / 4) * 32 + in / 16;
  *kb = (tile % tiles_k) * 4 + in % 4;
}

}  // namespace vgen::kern
