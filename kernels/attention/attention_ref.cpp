#include "kernels/attention/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace vgen::kern {

void attention_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B, int64_t Sq,
                   int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale) {
  attention_grouped_ref(q, k, v, out, lse, B, Sq, Skv, H, H, D, num_valid_kv, scale);
}

void attention_grouped_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                           int64_t Sq, int64_t Skv, int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv,
                           float scale) {
  const int64_t groups = H / KVH;
  const int64_t nk = std::clamp<int64_t>(num_valid_kv, 0, Skv);
  const float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp parallel
  {
    std::vector<float> s(size_t(std::max<int64_t>(nk, 1)));
    std::vector<double> acc(static_cast<size_t>(D));
#pragma omp for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Sq; ++i) {
          const float* qi = q + ((b * Sq + i) * H + h) * D;
          float* oi = out + ((b * Sq + i) * H + h) * D;
          if (nk == 0) {
            std::fill(oi, oi + D, 0.0f);
            if (lse) lse[(b * H + h) * Sq + i] = neg_inf;
            continue;
          }
          float m = neg_inf;
          for (int64_t j = 0; j < nk; ++j) {
            const float* kj = k + ((b * Skv + j) * KVH + h / groups) * D;
            float dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
            s[size_t(j)] = dot * scale;
            m = std::max(m, s[size_t(j)]);
          }
          double sum = 0;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < nk; ++j) {
            double p = std::exp(double(s[size_t(j)] - m));
            sum += p;
            const float* vj = v + ((b * Skv + j) * KVH + h / groups) * D;
            for (int64_t d = 0; d < D; ++d) acc[size_t(d)] += p * vj[d];
          }
          for (int64_t d = 0; d < D; ++d) oi[d] = float(acc[size_t(d)] / sum);
          if (lse) lse[(b * H + h) * Sq + i] = float(double(m) + std::log(sum));
        }
  }
}

void attention_merge_ref(float* o1, float* lse1, const float* o2, const float* lse2, int64_t B, int64_t S, int64_t H,
                         int64_t D) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        float& l1 = lse1[(b * H + h) * S + i];
        float l2 = lse2[(b * H + h) * S + i];
        float* a = o1 + ((b * S + i) * H + h) * D;
        const float* c = o2 + ((b * S + i) * H + h) * D;
        if (l2 == neg_inf) continue;
        if (l1 == neg_inf) {
          for (int64_t d = 0; d < D; ++d) a[d] = c[d];
          l1 = l2;
          continue;
        }
        float m = std::max(l1, l2);
        double w1 = std::exp(double(l1 - m)), w2 = std::exp(double(l2 - m));
        double tot = w1 + w2;
        for (int64_t d = 0; d < D; ++d) a[d] = float((w1 * a[d] + w2 * c[d]) / tot);
        l1 = float(double(m) + std::log(tot));
      }
}

void attention_merge_parts_ref(const float* const* parts, const float* const* lses, int n, float* out, float* lse_out,
                               int64_t B, int64_t S, int64_t H, int64_t D) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t li = (b * H + h) * S + i, row = ((b * S + i) * H + h) * D;
        float m = neg_inf;
        for (int p = 0; p < n; ++p) m = std::max(m, lses[p][li]);
        double tot = 0;
        for (int64_t d = 0; d < D; ++d) out[row + d] = 0.0f;
        if (m == neg_inf) {
          if (lse_out) lse_out[li] = neg_inf;
          continue;
        }
        for (int p = 0; p < n; ++p) tot += std::exp(double(lses[p][li] - m));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int p = 0; p < n; ++p)
            if (lses[p][li] != neg_inf) acc += std::exp(double(lses[p][li] - m)) * parts[p][row + d];
          out[row + d] = float(acc / tot);
        }
        if (lse_out) lse_out[li] = float(double(m) + std::log(tot));
      }
}

void attention_tail_merge_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                              int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale) {
  std::vector<float> o2(size_t(B * Sq * H * D)), l2(size_t(B * H * Sq));
  attention_ref(q, k, v, o2.data(), l2.data(), B, Sq, Skv, H, D, num_valid_kv, scale);
  attention_merge_ref(out, lse, o2.data(), l2.data(), B, Sq, H, D);
}

}  // namespace vgen::kern
