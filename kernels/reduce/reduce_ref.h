// CPU references of the reductions (double accumulation, one fixed order). CUDA: reduce.cuh.
#pragma once
#include <cstdint>

namespace vgen::kern {

// Σ|a[i] − b[i]| into *diff and Σ|b[i]| into *ref over n elements (the relative L1 change of a
// against b is diff / ref; the first-block cache's test).
void abs_diff_sums_ref(const float* a, const float* b, int64_t n, double* diff, double* ref);

}  // namespace vgen::kern
