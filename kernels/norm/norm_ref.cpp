#include "kernels/norm/norm_ref.h"

#include <cmath>

namespace vgen::kern {
namespace {

// Mean and 1/sqrt(biased variance + eps) of one row; two passes in double.
inline void row_stats(const float* x, int64_t width, float eps, float& mean, float& rstd) {
  double s = 0;
  for (int64_t i = 0; i < width; ++i) s += x[i];
  const double m = width ? s / double(width) : 0.0;
  double v = 0;
  for (int64_t i = 0; i < width; ++i) {
    const double d = double(x[i]) - m;
    v += d * d;
  }
  v = width ? v / double(width) : 0.0;
  mean = float(m);
  rstd = float(1.0 / std::sqrt(v + double(eps)));
}

}  // namespace

void layer_norm_ref(const float* x, const float* weight, const float* bias, float* y, int64_t rows, int64_t width,
                    float eps) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    float* yr = y + r * width;
    float mean, rstd;
    row_stats(xr, width, eps, mean, rstd);
    for (int64_t i = 0; i < width; ++i) {
      float n = (xr[i] - mean) * rstd;
      if (weight) n *= weight[i];
      if (bias) n += bias[i];
      yr[i] = n;
    }
  }
}

void layer_norm_modulate_ref(const float* x, const float* shift, const float* scale, int64_t mod_stride,
                             int64_t rows_per_mod, float* y, int64_t rows, int64_t width, float eps) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    float* yr = y + r * width;
    const int64_t m = r / rows_per_mod;
    const float* sh = shift + m * mod_stride;
    const float* sc = scale + m * mod_stride;
    float mean, rstd;
    row_stats(xr, width, eps, mean, rstd);
    for (int64_t i = 0; i < width; ++i) yr[i] = (xr[i] - mean) * rstd * (1.0f + sc[i]) + sh[i];
  }
}

void rms_norm_ref(const float* x, const float* weight, float* y, int64_t rows, int64_t width, float eps) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * width;
    float* yr = y + r * width;
    double s = 0;
    for (int64_t i = 0; i < width; ++i) s += double(xr[i]) * double(xr[i]);
    const float rs = float(1.0 / std::sqrt((width ? s / double(width) : 0.0) + double(eps)));
    for (int64_t i = 0; i < width; ++i) yr[i] = weight ? xr[i] * rs * weight[i] : xr[i] * rs;
  }
}

}  // namespace vgen::kern
