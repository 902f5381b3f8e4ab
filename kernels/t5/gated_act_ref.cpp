#include "kernels/t5/gated_act_ref.h"

#include <cmath>

namespace vgen::kern {

namespace {
inline float apply(float x, T5Act act) {
  switch (act) {
    case T5Act::kRelu: return x > 0.0f ? x : 0.0f;
    case T5Act::kGeluTanh: {
      // Same op order as transformers' NewGELUActivation, each step in fp32.
      const float k = float(std::sqrt(2.0 / M_PI));
      float inner = k * (x + 0.044715f * (x * x * x));
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
    case T5Act::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2)));
    case T5Act::kSilu: return x / (1.0f + std::exp(-x));
  }
  return x;
}
}  // namespace

void gated_act_ref(const float* gate, const float* lin, float* out, int64_t n, T5Act act) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float g = apply(gate[i], act);
    out[i] = lin ? g * lin[i] : g;
  }
}

}  // namespace vgen::kern
