#include "kernels/gqa/gqa_attention_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vgen::kern {

void gqa_attention_ref(const float* q, const float* k, const float* v, float* out, int64_t B, int64_t Sq, int64_t Skv,
                       int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv, bool causal, int64_t causal_offset,
                       float scale) {
  const int64_t groups = H / KVH, valid = std::clamp<int64_t>(num_valid_kv, 0, Skv);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      const int64_t seen = causal ? std::clamp<int64_t>(i + causal_offset + 1, 0, valid) : valid;
      std::vector<double> p(size_t(std::max<int64_t>(seen, 1)));
      for (int64_t h = 0; h < H; ++h) {
        const float* qr = q + ((b * Sq + i) * H + h) * D;
        float* o = out + ((b * Sq + i) * H + h) * D;
        const int64_t kh = h / groups;
        double mx = -INFINITY;
        for (int64_t j = 0; j < seen; ++j) {
          const float* kr = k + ((b * Skv + j) * KVH + kh) * D;
          double s = 0;
          for (int64_t d = 0; d < D; ++d) s += double(qr[d]) * double(kr[d]);
          p[size_t(j)] = s * double(scale);
          mx = std::max(mx, p[size_t(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < seen; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - mx));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < seen; ++j) acc += p[size_t(j)] * double(v[((b * Skv + j) * KVH + kh) * D + d]);
          o[d] = seen ? float(acc / sum) : 0.0f;
        }
      }
    }
}

}  // namespace vgen::kern
