#include "kernels/vae_norm/vae_norm_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vgen::kern {

void vae_rms_norm_ref(const float* x, const float* gamma, float* y, int64_t N, int64_t C, int64_t S, bool silu,
                      float eps) {
  const float scale = std::sqrt(float(C));
  constexpr int64_t kBlock = 256;  // positions per task: the channel loop strides by S
  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * C * S;
    float* yn = y + n * C * S;
#pragma omp parallel for schedule(static)
    for (int64_t s0 = 0; s0 < S; s0 += kBlock) {
      const int64_t len = std::min(kBlock, S - s0);
      float inv[kBlock];
      double ss[kBlock] = {};
      for (int64_t c = 0; c < C; ++c) {
        const float* row = xn + c * S + s0;
        for (int64_t i = 0; i < len; ++i) ss[i] += double(row[i]) * double(row[i]);
      }
      for (int64_t i = 0; i < len; ++i) inv[i] = std::max(float(std::sqrt(ss[i])), eps);
      for (int64_t c = 0; c < C; ++c) {
        const float* row = xn + c * S + s0;
        float* out = yn + c * S + s0;
        const float g = gamma[c];
        for (int64_t i = 0; i < len; ++i) {
          float v = row[i] / inv[i] * scale * g;
          if (silu) v = v / (1.0f + std::exp(-v));
          out[i] = v;
        }
      }
    }
  }
}

}  // namespace vgen::kern
