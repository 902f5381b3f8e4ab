// CPU references of the elementwise ops of the DiT and the denoising loop (fp32). out may alias
// an input. CUDA: elementwise.cuh.
#pragma once
#include <cstdint>

namespace vgen::kern {

// out = a + b.
void add_ref(const float* a, const float* b, float* out, int64_t n);

// out = a − b.
void sub_ref(const float* a, const float* b, float* out, int64_t n);

// out[r, i] = x[r, i] + row[i] for rows × width (a row vector broadcast over rows).
void add_row_ref(const float* x, const float* row, float* out, int64_t rows, int64_t width);

// Gated residual: out[r] = x[r] + y[r] · gate_m, row r using gate row m = r / rows_per_mod at
// gate + m·mod_stride (same modulation addressing as layer_norm_modulate_ref).
void gated_residual_ref(const float* x, const float* y, const float* gate, int64_t mod_stride, int64_t rows_per_mod,
                        float* out, int64_t rows, int64_t width);

// out[r, i] = x[r, i] · scale[r] for rows × width.
void scale_rows_ref(const float* x, const float* scale, float* out, int64_t rows, int64_t width);

// Classifier-free guidance: out = uncond + scale·(cond − uncond).
void cfg_combine_ref(const float* cond, const float* uncond, float* out, int64_t n, float scale);

}  // namespace vgen::kern
