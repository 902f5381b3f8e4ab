// Four floats as four e4m3 bytes in one word (a in the low byte), rounded to nearest even with
// saturation (fp8_e4m3_ref.h's conversion). Shared by the row quantisation and the fp8 attention.
// Header-only, CUDA sources only.
#pragma once
#include <cuda_fp8.h>

#include <cstdint>

namespace vgen::kern {

__device__ __forceinline__ uint32_t pack_e4m3x4(float a, float b, float c, float d) {
  const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
  const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(c, d), __NV_SATFINITE, __NV_E4M3);
  return lo | hi << 16;
}

}  // namespace vgen::kern
