// CUDA launchers of the DiT's elementwise ops with the contracts of elementwise_ref.h, for f32 or
// bf16 activations: fp32 arithmetic, one rounding into the output type (wan_spec.md §1.4: the
// gated residual bf16(float(x) + float(y)·gate), the plain bf16 add of the cross-attention
// residual). out may alias an input. Raw device pointers; queued on `stream`; returns the launch
// status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// out = a + b; a, b, out of `type`.
cudaError_t add(const void* a, const void* b, void* out, FloatType type, int64_t n, cudaStream_t stream);

// out = a − b; a, b, out of `type`.
cudaError_t sub(const void* a, const void* b, void* out, FloatType type, int64_t n, cudaStream_t stream);

// out[r, i] = x[r, i] + row[i]; x of x_type, row fp32, out of out_type.
cudaError_t add_row(const void* x, FloatType x_type, const float* row, void* out, FloatType out_type, int64_t rows,
                    int64_t width, cudaStream_t stream);

// out[r] = x[r] + y[r]·gate_m with gate row m = r / rows_per_mod at gate + m·mod_stride (fp32);
// x, y, out of `type`.
cudaError_t gated_residual(const void* x, const void* y, const float* gate, int64_t mod_stride, int64_t rows_per_mod,
                           void* out, FloatType type, int64_t rows, int64_t width, cudaStream_t stream);

// out[r, i] = x[r, i]·scale[r] (scale fp32); x, out of `type`. Folds a per-output-feature gate into
// a Linear's weight [N, K] and bias [N, 1] rows.
cudaError_t scale_rows(const void* x, const float* scale, void* out, FloatType type, int64_t rows, int64_t width,
                       cudaStream_t stream);

// out = uncond + scale·(cond − uncond), all of `type`.
cudaError_t cfg_combine(const void* cond, const void* uncond, void* out, FloatType type, int64_t n, float scale,
                        cudaStream_t stream);

}  // namespace vgen::kern
