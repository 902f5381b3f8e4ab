#include "kernels/vae_subpixel/subpixel_ref.h"

namespace vgen::kern {

namespace {
// Taps of the 3×3 kernel that phase `a` folds into tap `k` of the 2×2 one: [first, last].
inline int tap_first(int a, int k) { return a == 0 ? (k == 0 ? 0 : 1) : (k == 0 ? 0 : 2); }
inline int tap_last(int a, int k) { return a == 0 ? (k == 0 ? 0 : 2) : (k == 0 ? 1 : 2); }
}  // namespace

void subpixel_weight_ref(const float* w3, float* w4, int64_t cout, int64_t cin) {
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < cout; ++o)
    for (int p = 0; p < 4; ++p) {
      const int a = p / 2, b = p % 2;
      for (int64_t i = 0; i < cin; ++i) {
        const float* src = w3 + (o * cin + i) * 9;
        float* dst = w4 + ((p * cout + o) * cin + i) * 4;
        for (int ky = 0; ky < 2; ++ky)
          for (int kx = 0; kx < 2; ++kx) {
            float s = 0.0f;
            for (int dy = tap_first(a, ky); dy <= tap_last(a, ky); ++dy)
              for (int dx = tap_first(b, kx); dx <= tap_last(b, kx); ++dx) s += src[dy * 3 + dx];
            dst[ky * 2 + kx] = s;
          }
      }
    }
}

void subpixel_shuffle_ref(const float* r, float* y, int64_t C, int64_t T, int64_t H, int64_t W) {
  const int64_t Hr = H + 1, Wr = W + 1, Ho = 2 * H, Wo = 2 * W;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t yo = 0; yo < Ho; ++yo) {
        const int64_t i = yo / 2, a = yo % 2;
        float* dst = y + ((c * T + t) * Ho + yo) * Wo;
        for (int64_t xo = 0; xo < Wo; ++xo) {
          const int64_t j = xo / 2, b = xo % 2;
          dst[xo] = r[((((2 * a + b) * C + c) * T + t) * Hr + i + a) * Wr + j + b];
        }
      }
}

}  // namespace vgen::kern
