// T5 layer norm (RMS norm without mean subtraction or bias), CPU fp32 reference.
#pragma once
#include <cstdint>

namespace vgen::kern {

// y[r, :] = w ⊙ x[r, :] · rsqrt(mean(x[r, :]²) + eps); x, y [rows, dim] (may alias), w [dim].
void t5_rms_norm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t dim, float eps);

}  // namespace vgen::kern
