#include "kernels/elementwise/elementwise_ref.h"

namespace vgen::kern {

void add_ref(const float* a, const float* b, float* out, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void sub_ref(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
}

void add_row_ref(const float* x, const float* row, float* out, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = x[r * width + i] + row[i];
}

void gated_residual_ref(const float* x, const float* y, const float* gate, int64_t mod_stride, int64_t rows_per_mod,
                        float* out, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gate + (r / rows_per_mod) * mod_stride;
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = x[r * width + i] + y[r * width + i] * g[i];
  }
}

void scale_rows_ref(const float* x, const float* scale, float* out, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = x[r * width + i] * scale[r];
}

void cfg_combine_ref(const float* cond, const float* uncond, float* out, int64_t n, float scale) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = uncond[i] + scale * (cond[i] - uncond[i]);
}

}  // namespace vgen::kern
