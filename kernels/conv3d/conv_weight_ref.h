// CPU reference of kernels/conv3d/conv_weight.cuh (f32 out).
#pragma once
#include <cstdint>

namespace vgen::kern {

// dst[co, t, ci] = src[co, ci, t] for co < cout, 0 for cout <= co < cout_store.
void conv_weight_taps_last_ref(const float* src, float* dst, int64_t cout, int64_t cout_store, int64_t cin,
                               int64_t taps);

}  // namespace vgen::kern
