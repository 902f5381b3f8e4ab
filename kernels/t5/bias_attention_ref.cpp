#include "kernels/t5/bias_attention_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vgen::kern {

void t5_attention_ref(const float* q, const float* k, const float* v, const float* rel_bias, float* out, int64_t Lq,
                      int64_t Lk, int64_t H, int64_t D, int64_t num_valid_kv) {
  const int64_t n = std::clamp<int64_t>(num_valid_kv, 0, Lk);
  const int64_t W = H * D;        // row stride of q, k, v, out
  const int64_t R = Lq + Lk - 1;  // bias row length
#pragma omp parallel if (H * Lq * n * D > 65536)
  {
    std::vector<float> p(size_t(std::max<int64_t>(n, 1)));
#pragma omp for collapse(2) schedule(static)
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < Lq; ++i) {
        const float* qi = q + i * W + h * D;
        float* oi = out + i * W + h * D;
        for (int64_t d = 0; d < D; ++d) oi[d] = 0.0f;
        if (n == 0) continue;
        const float* bias = rel_bias ? rel_bias + h * R + (Lq - 1 - i) : nullptr;  // bias[j] ↔ rel = j − i
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          const float* kj = k + j * W + h * D;
          float s = 0.0f;
          for (int64_t d = 0; d < D; ++d) s += qi[d] * kj[d];
          if (bias) s += bias[j];
          p[size_t(j)] = s;
          mx = std::max(mx, s);
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          p[size_t(j)] = std::exp(p[size_t(j)] - mx);
          sum += p[size_t(j)];
        }
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < n; ++j) {
          const float w = p[size_t(j)] * inv;
          const float* vj = v + j * W + h * D;
          for (int64_t d = 0; d < D; ++d) oi[d] += w * vj[d];
        }
      }
    }
  }
}

}  // namespace vgen::kern
