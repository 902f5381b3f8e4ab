// CPU references of the normalisations of the Wan DiT (fp32). The CUDA launchers in norm.cuh have
// the same contracts. Rows are contiguous vectors of `width` floats; y may alias x.
#pragma once
#include <cstdint>

namespace vgen::kern {

// y = (x - mean) / sqrt(var_biased + eps) per row, then · weight + bias when given (either may be null).
void layer_norm_ref(const float* x, const float* weight, const float* bias, float* y, int64_t rows, int64_t width,
                    float eps);

// AdaLN: y = LN(x) · (1 + scale_m) + shift_m (LN without affine), where row r uses modulation row
// m = r / rows_per_mod found at shift + m·mod_stride and scale + m·mod_stride (e.g. per-sample
// modulation [B, 6, D]: rows_per_mod = S, mod_stride = 6·D; per-token: rows_per_mod = 1).
void layer_norm_modulate_ref(const float* x, const float* shift, const float* scale, int64_t mod_stride,
                             int64_t rows_per_mod, float* y, int64_t rows, int64_t width, float eps);

// y = x · rsqrt(mean(x²) + eps) · weight per row (weight [width], may be null).
void rms_norm_ref(const float* x, const float* weight, float* y, int64_t rows, int64_t width, float eps);

}  // namespace vgen::kern
