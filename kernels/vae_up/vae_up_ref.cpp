#include "kernels/vae_up/vae_up_ref.h"

#include <algorithm>

namespace vgen::kern {

void dup_up_add_ref(float* y, const float* x, int64_t Cin, int64_t Cout, int64_t Cy, int64_t T, int64_t H, int64_t W,
                    int64_t ft, int64_t fs, int64_t phase) {
  (void)Cy;
  const int64_t r = Cout * ft * fs * fs / Cin, Ho = fs * H, Wo = fs * W;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < Cout; ++o)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t yo = 0; yo < Ho; ++yo) {
        const int64_t h = yo / fs, b = yo % fs;
        float* dst = y + ((o * T + t) * Ho + yo) * Wo;
        for (int64_t xo = 0; xo < Wo; ++xo) {
          const int64_t w = xo / fs, d = xo % fs;
          const int64_t j = ((o * ft + phase) * fs + b) * fs + d;  // repeated channel
          dst[xo] += x[((j / r * T + t) * H + h) * W + w];
        }
      }
}

void unpatchify_clamp_ref(const float* x, float* y, int64_t Cx, int64_t C, int64_t p, int64_t T, int64_t H, int64_t W,
                          int64_t c_stride, float lo, float hi) {
  (void)Cx;
  const int64_t Ho = p * H, Wo = p * W;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t yo = 0; yo < Ho; ++yo) {
        const int64_t h = yo / p, r = yo % p;
        float* dst = y + c * c_stride + (t * Ho + yo) * Wo;
        for (int64_t xo = 0; xo < Wo; ++xo) {
          const int64_t w = xo / p, q = xo % p;
          dst[xo] = std::min(std::max(x[((((c * p + q) * p + r) * T + t) * H + h) * W + w], lo), hi);
        }
      }
}

}  // namespace vgen::kern
