// FP8 E4M3 (OCP "e4m3fn": 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinities,
// S.1111.111 the only NaN, largest finite 448, smallest subnormal 2^-9) on the host, bit-exact with
// CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) and PTX cvt.rn.satfinite.e4m3x2.f32:
// round to nearest even, magnitudes beyond 448 saturate to ±448, any NaN becomes 0x7F (positive,
// as the H200 converts a negative NaN too).
// The one definition every fp8 CPU reference and emulation uses (docs/fp8.md).
#pragma once
#include <cstdint>

namespace vgen::kern {

constexpr float kFp8E4M3Max = 448.0f;

uint8_t fp8_e4m3_encode(float x);
float fp8_e4m3_decode(uint8_t b);
inline float fp8_e4m3_round(float x) { return fp8_e4m3_decode(fp8_e4m3_encode(x)); }

// The scale of a group of values whose largest magnitude is amax: values are stored as
// e4m3(x · (448 / amax)) and read back as e4m3 · (amax / 448). A group of zeros, of values below
// kFp8MinAmax (448/amax would overflow to Inf, and 0 · Inf is NaN) or with amax not finite gets
// scale 1 (its values stored unscaled: tiny ones as 0). Both factors are formed exactly like this on
// the device.
constexpr float kFp8MinAmax = 1e-30f;
inline bool fp8_scaled(float amax) { return amax >= kFp8MinAmax && amax < 3.0e38f; }
inline float fp8_quant_mul(float amax) { return fp8_scaled(amax) ? kFp8E4M3Max / amax : 1.0f; }
inline float fp8_dequant_mul(float amax) { return fp8_scaled(amax) ? amax / kFp8E4M3Max : 1.0f; }

}  // namespace vgen::kern
