// e4m3 and INT8 encoding on the device, shared by the row quantisation (and the norms that quantise
// their output rows) and the fp8 attention: the per-group scales, and four floats as four e4m3 bytes
// in one word (a in the low byte), rounded to nearest even with saturation (fp8_e4m3_ref.h's
// conversion); INT8 bytes as int8_ref.h rounds them.
// Header-only, CUDA sources only.
#pragma once
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {

// The scales of a group with largest magnitude a stored in codes up to `top` (448 for e4m3, 127 for
// INT8): x · top/a to store, · a/top to read back, 1 outside fp8_scaled's range; IEEE division as
// on the host (fp8_quant_mul / fp8_dequant_mul, int8_quant_mul / int8_dequant_mul).
__device__ __forceinline__ float group_quant_mul(float top, float a) {
  return (a >= kFp8MinAmax && a < 3.0e38f) ? __fdiv_rn(top, a) : 1.0f;
}
__device__ __forceinline__ float group_dequant_mul(float top, float a) {
  return (a >= kFp8MinAmax && a < 3.0e38f) ? __fdiv_rn(a, top) : 1.0f;
}
__device__ __forceinline__ float e4m3_quant_mul(float a) { return group_quant_mul(kFp8E4M3Max, a); }
__device__ __forceinline__ float e4m3_dequant_mul(float a) { return group_dequant_mul(kFp8E4M3Max, a); }
// v·mul as the encoder's input; a NaN product becomes the positive canonical NaN (byte 0x7F), as in
// quantize_rows_fp8_ref, whatever sign the multiply would give it.
__device__ __forceinline__ float e4m3_scaled(float v, float mul) {
  const float q = v * mul;
  return q == q ? q : __int_as_float(0x7fffffff);
}

__device__ __forceinline__ uint32_t pack_e4m3x4(float a, float b, float c, float d) {
  const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
  const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(c, d), __NV_SATFINITE, __NV_E4M3);
  return lo | hi << 16;
}

// rint(x) with saturation to ±127 as a byte (int8_round of int8_ref.h: cvt.rni gives 0 for NaN).
__device__ __forceinline__ uint32_t int8_bits(float x) {
  return uint32_t(max(-127, min(127, __float2int_rn(x)))) & 0xFFu;
}
// Eight values times mul as eight INT8 bytes (v[0] lowest), for an 8-byte store.
__device__ __forceinline__ uint2 int8_pack8(const float (&v)[8], float mul) {
  uint32_t w[2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
    w[h] = int8_bits(v[4 * h] * mul) | int8_bits(v[4 * h + 1] * mul) << 8 | int8_bits(v[4 * h + 2] * mul) << 16 |
           int8_bits(v[4 * h + 3] * mul) << 24;
  return make_uint2(w[0], w[1]);
}

// Eight values times mul as eight e4m3 bytes (e4m3_scaled each), for an 8-byte store.
__device__ __forceinline__ uint2 e4m3_pack8(const float (&v)[8], float mul) {
  return make_uint2(
      pack_e4m3x4(e4m3_scaled(v[0], mul), e4m3_scaled(v[1], mul), e4m3_scaled(v[2], mul), e4m3_scaled(v[3], mul)),
      pack_e4m3x4(e4m3_scaled(v[4], mul), e4m3_scaled(v[5], mul), e4m3_scaled(v[6], mul), e4m3_scaled(v[7], mul)));
}

}  // namespace vgen::kern
