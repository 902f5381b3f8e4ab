#include "kernels/reduce/reduce_ref.h"

#include <cmath>

namespace vgen::kern {

void abs_diff_sums_ref(const float* a, const float* b, int64_t n, double* diff, double* ref) {
  double d = 0.0, r = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    d += std::fabs(double(a[i]) - double(b[i]));
    r += std::fabs(double(b[i]));
  }
  *diff = d;
  *ref = r;
}

}  // namespace vgen::kern
