#include "kernels/embed/timestep_embed_ref.h"

#include <cmath>

namespace vgen::kern {

void timestep_embedding_ref(const float* t, float* out, int64_t n, int64_t dim, bool flip_sin_to_cos,
                            float freq_shift, float max_period) {
  const int64_t half = dim / 2;
  // fp32 throughout, in diffusers' order: exponent = (−ln(P)·k) / (half − shift), then exp.
  const float neg_log_p = float(-std::log(double(max_period)));
  const float denom = float(half) - freq_shift;
  for (int64_t i = 0; i < n; ++i) {
    float* o = out + i * dim;
    for (int64_t k = 0; k < half; ++k) {
      const float freq = std::exp((neg_log_p * float(k)) / denom);
      const float a = t[i] * freq;
      const float s = std::sin(a), c = std::cos(a);
      o[k] = flip_sin_to_cos ? c : s;
      o[half + k] = flip_sin_to_cos ? s : c;
    }
    if (dim % 2) o[dim - 1] = 0.0f;
  }
}

}  // namespace vgen::kern
