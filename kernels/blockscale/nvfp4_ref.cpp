#include "kernels/blockscale/nvfp4_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/blockscale/blockscale_format.h"
#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {

float finite_amax_ref(const float* x, int64_t n) {
  float a = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(x[i])) a = std::max(a, std::fabs(x[i]));
  return a;
}

float nvfp4_tensor_scale(float amax_t) {
  return fp8_scaled(amax_t) ? kFp8E4M3Max * kE2m1Max / amax_t : 1.0f;
}

void nvfp4_quantize_ref(const float* x, int64_t rows, int64_t K, int64_t ldx, float tensor_scale, uint8_t* q,
                        uint8_t* scales) {
  const int64_t nb = nvfp4_kblocks(K), rb = nvfp4_row_bytes(K);
  std::vector<uint8_t> codes(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t k0 = b * kNvfp4Block, k1 = std::min<int64_t>(K, k0 + kNvfp4Block);
      float amax = 0.0f;
      bool special = false;
      for (int64_t k = k0; k < k1; ++k) {
        special |= !std::isfinite(xr[k]);
        amax = std::max(amax, std::fabs(xr[k]));
      }
      if (special) {
        scales[r * nb + b] = 0x7F;  // e4m3 NaN
        std::fill(codes.begin() + k0, codes.begin() + k1, uint8_t(0));
        continue;
      }
      const uint8_t s = fp8_e4m3_encode(amax / kE2m1Max * tensor_scale);
      scales[r * nb + b] = s;
      const float sd = fp8_e4m3_decode(s);
      const float mul = sd > 0.0f ? tensor_scale / sd : 0.0f;
      for (int64_t k = k0; k < k1; ++k) codes[size_t(k)] = e2m1_encode(xr[k] * mul);
    }
    for (int64_t i = 0; i < rb; ++i) {
      const uint8_t lo = codes[size_t(2 * i)], hi = 2 * i + 1 < K ? codes[size_t(2 * i + 1)] : 0;
      q[r * rb + i] = uint8_t(lo | hi << 4);
    }
  }
}

void nvfp4_dequantize_ref(const uint8_t* q, const uint8_t* scales, float tensor_scale, int64_t rows, int64_t K,
                          float* x) {
  const int64_t nb = nvfp4_kblocks(K), rb = nvfp4_row_bytes(K);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t byte = q[r * rb + k / 2];
      const uint8_t c = (k & 1) ? byte >> 4 : byte & 0xF;
      x[r * K + k] = e2m1_decode(c) * fp8_e4m3_decode(scales[r * nb + k / kNvfp4Block]) / tensor_scale;
    }
}

void nvfp4_fake_quant_ref(float* x, int64_t rows, int64_t K) {
  const float S = nvfp4_tensor_scale(finite_amax_ref(x, rows * K));
  std::vector<uint8_t> q(size_t(rows * nvfp4_row_bytes(K))), s(size_t(rows * nvfp4_kblocks(K)));
  nvfp4_quantize_ref(x, rows, K, K, S, q.data(), s.data());
  nvfp4_dequantize_ref(q.data(), s.data(), S, rows, K, x);
}

void nvfp4_fake_quant_rows_ref(float* x, int64_t rows, int64_t K) {
  for (int64_t r = 0; r < rows; ++r) nvfp4_fake_quant_ref(x + r * K, 1, K);
}

}  // namespace vgen::kern
