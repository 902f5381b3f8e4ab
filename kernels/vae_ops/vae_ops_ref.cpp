#include "kernels/vae_ops/vae_ops_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vgen::kern {

void silu_ref(const float* x, float* y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void upsample_nearest2x_ref(const float* x, float* y, int64_t P, int64_t H, int64_t W) {
  const int64_t W2 = 2 * W;
#pragma omp parallel for schedule(static)
  for (int64_t ph = 0; ph < P * H; ++ph) {
    const float* src = x + ph * W;
    float* dst = y + ph * 2 * W2;  // output rows 2h and 2h+1 of plane p
    for (int64_t w = 0; w < W; ++w) dst[2 * w] = dst[2 * w + 1] = src[w];
    std::memcpy(dst + W2, dst, size_t(W2) * sizeof(float));
  }
}

void clamp_ref(const float* x, float* y, int64_t n, float lo, float hi) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i], lo), hi);
}

void add_inplace_ref(float* y, const float* x, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void time_interleave2_ref(const float* x, float* y, int64_t C, int64_t T, int64_t S) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t k = 0; k < 2; ++k)
        std::memcpy(y + (c * 2 * T + 2 * t + k) * S, x + ((k * C + c) * T + t) * S, size_t(S) * sizeof(float));
}

}  // namespace vgen::kern
