// Symmetric INT8 quantisation of a group on the host (the INT8 Q·Kᵀ of the fp8 attention, per block;
// the INT8 rows of quant.cuh, per token or output channel): x stored as rint(x · 127/amax) (round to
// nearest even, clamped to ±127, NaN as 0), read back · amax/127; a group of zeros, of values below
// kFp8MinAmax or with amax not finite gets scale 1, as the e4m3 scales (fp8_e4m3_ref.h). Formed
// exactly like this on the device (e4m3_pack.cuh's group_quant_mul and int8_bits).
#pragma once
#include <cmath>

#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {

constexpr float kInt8Max = 127.0f;
inline float int8_quant_mul(float amax) { return fp8_scaled(amax) ? kInt8Max / amax : 1.0f; }
inline float int8_dequant_mul(float amax) { return fp8_scaled(amax) ? amax / kInt8Max : 1.0f; }
inline float int8_round(float x) {
  return std::isnan(x) ? 0.0f : std::fmin(std::fmax(std::nearbyint(x), -kInt8Max), kInt8Max);
}

}  // namespace vgen::kern
