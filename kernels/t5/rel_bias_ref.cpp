#include "kernels/t5/rel_bias_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace vgen::kern {

int t5_relative_bucket(int64_t rel, bool bidirectional, int num_buckets, int max_distance) {
  int bucket = 0;
  int64_t n;  // non-negative distance
  if (bidirectional) {
    num_buckets /= 2;
    if (rel > 0) bucket += num_buckets;
    n = rel < 0 ? -rel : rel;
  } else {
    n = rel < 0 ? -rel : 0;  // -min(rel, 0)
  }
  int max_exact = num_buckets / 2;
  if (n < max_exact) return bucket + int(n);
  // float32 as in PyTorch: log(n / max_exact) / log(max_distance / max_exact) * (nb − max_exact).
  float ratio = float(n) / float(max_exact);
  float scaled = std::log(ratio) / float(std::log(double(max_distance) / double(max_exact))) *
                 float(num_buckets - max_exact);
  int64_t large = int64_t(max_exact) + int64_t(scaled);  // .to(torch.long) truncates
  large = std::min<int64_t>(large, num_buckets - 1);
  return bucket + int(large);
}

void t5_rel_bias_ref(const float* table, float* bias, int64_t num_heads, int64_t rel_min, int64_t num_rel,
                     bool bidirectional, int num_buckets, int max_distance) {
  for (int64_t t = 0; t < num_rel; ++t) {
    int b = t5_relative_bucket(rel_min + t, bidirectional, num_buckets, max_distance);
    for (int64_t h = 0; h < num_heads; ++h) bias[h * num_rel + t] = table[int64_t(b) * num_heads + h];
  }
}

}  // namespace vgen::kern
