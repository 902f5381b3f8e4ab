#include "kernels/t5/t5_norm_ref.h"

#include <cmath>

namespace vgen::kern {

void t5_rms_norm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps) {
#pragma omp parallel for schedule(static) if (rows * dim > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    double ss = 0;  // the statistic in (at least) fp32, as transformers' T5LayerNorm
    for (int64_t i = 0; i < dim; ++i) ss += double(xr[i]) * double(xr[i]);
    float inv = 1.0f / std::sqrt(float(ss / double(dim)) + eps);
    for (int64_t i = 0; i < dim; ++i) yr[i] = w[i] * (xr[i] * inv);
  }
}

}  // namespace vgen::kern
