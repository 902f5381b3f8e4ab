#include "kernels/blockscale/mxfp8_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blockscale/blockscale_format.h"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {

void mxfp8_quantize_ref(const float* x, int64_t rows, int64_t K, int64_t ldx, uint8_t* q, uint8_t* scales) {
  const int64_t nb = mxfp8_kblocks(K);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t k0 = b * kMxfp8Block, k1 = std::min<int64_t>(K, k0 + kMxfp8Block);
      float amax = 0.0f;
      bool special = false;
      for (int64_t k = k0; k < k1; ++k) {
        special |= !std::isfinite(xr[k]);
        amax = std::max(amax, std::fabs(xr[k]));
      }
      uint8_t* qr = q + r * K;
      if (special) {
        scales[r * nb + b] = kUe8m0Nan;
        std::memset(qr + k0, 0, size_t(k1 - k0));
        continue;
      }
      const int e = mxfp8_scale_exp(amax);
      scales[r * nb + b] = uint8_t(e + 127);
      // V / X as V · 2^-e: exact (-e lies in -119..127, a normal power of two).
      const float inv = bs_exp2i(-e);
      for (int64_t k = k0; k < k1; ++k) qr[k] = fp8_e4m3_encode(xr[k] * inv);
    }
  }
}

void mxfp8_dequantize_ref(const uint8_t* q, const uint8_t* scales, int64_t rows, int64_t K, float* x) {
  const int64_t nb = mxfp8_kblocks(K);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k)
      x[r * K + k] = fp8_e4m3_decode(q[r * K + k]) * ue8m0_decode(scales[r * nb + k / kMxfp8Block]);
}

void mxfp8_fake_quant_ref(float* x, int64_t rows, int64_t K) {
  const int64_t nb = mxfp8_kblocks(K);
  uint8_t q[kMxfp8Block], s;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t k0 = b * kMxfp8Block, n = std::min<int64_t>(K - k0, kMxfp8Block);
      mxfp8_quantize_ref(x + r * K + k0, 1, n, n, q, &s);
      mxfp8_dequantize_ref(q, &s, 1, n, x + r * K + k0);
    }
}

void swizzle_scales_ref(const uint8_t* scales, int64_t rows, int64_t kblocks, uint8_t* out, uint8_t pad) {
  std::memset(out, pad, size_t(bs_scales_bytes(rows, kblocks)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < kblocks; ++b) out[bs_scale_offset(r, b, kblocks)] = scales[r * kblocks + b];
}

void unswizzle_scales_ref(const uint8_t* swizzled, int64_t rows, int64_t kblocks, uint8_t* scales) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < kblocks; ++b) scales[r * kblocks + b] = swizzled[bs_scale_offset(r, b, kblocks)];
}

}  // namespace vgen::kern
