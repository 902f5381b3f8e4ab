#include "kernels/rope/rope_ref.h"

namespace vgen::kern {

void rope_ref(const float* x, const float* cos, const float* sin, float* y, int64_t batch, int64_t seq, int64_t heads,
              int64_t head_dim) {
  const int64_t pairs = head_dim / 2;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const float* c = cos + s * head_dim;
      const float* sn = sin + s * head_dim;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t off = ((b * seq + s) * heads + h) * head_dim;
        for (int64_t j = 0; j < pairs; ++j) {
          const float x1 = x[off + 2 * j], x2 = x[off + 2 * j + 1];
          const float cj = c[2 * j], sj = sn[2 * j + 1];
          y[off + 2 * j] = x1 * cj - x2 * sj;
          y[off + 2 * j + 1] = x1 * sj + x2 * cj;
        }
      }
    }
}

}  // namespace vgen::kern
