#include "kernels/activation/activation_ref.h"

#include <cmath>

namespace vgen::kern {

void gelu_tanh_ref(const float* x, float* y, int64_t n) {
  const float k = 0.7978845608028654f;  // sqrt(2/π)
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

void gelu_erf_ref(const float* x, float* y, int64_t n) {
  const float k = 0.7071067811865476f;  // 1/√2
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::erf(v * k));
  }
}

void quick_gelu_ref(const float* x, float* y, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v / (1.0f + std::exp(-1.702f * v));
  }
}

}  // namespace vgen::kern
