// CUDA launchers of the DiT normalisations with the contracts of norm_ref.h, for f32 or bf16
// activations (wan_spec.md §1.4): statistics and arithmetic in fp32, one rounding into y's type
// at the end (RMSNorm with a bf16 y rounds twice, see rms_norm). The fused QK RMSNorm + RoPE is
// kern::rms_norm_rope in kernels/rope/rope.cuh. Rows are contiguous vectors of
// `width` elements; y may alias x (same type). One block per row, the row in registers when its
// width has a register shape (kernels/common/row_regs.cuh), else cached in shared memory (width
// up to ~56k). Raw device pointers; queued on `stream`; returns the launch status.
// Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// y = LN(x)·weight + bias; weight/bias fp32 [width] or null (norm2 keeps them fp32, §1.3).
cudaError_t layer_norm(const void* x, FloatType x_type, const float* weight, const float* bias, void* y,
                       FloatType y_type, int64_t rows, int64_t width, float eps, cudaStream_t stream);

// AdaLN (layer_norm_modulate_ref): y = LN(x)·(1 + scale_m) + shift_m, fp32 modulation rows
// m = r / rows_per_mod at shift/scale + m·mod_stride.
cudaError_t layer_norm_modulate(const void* x, FloatType x_type, const float* shift, const float* scale,
                                int64_t mod_stride, int64_t rows_per_mod, void* y, FloatType y_type, int64_t rows,
                                int64_t width, float eps, cudaStream_t stream);

// Residual update fused with the norm that reads it: x <- x + res·gate_m (gate null: x + res),
// rounded into `type` and stored back into x, then y = the norm of the updated x — the values of
// gated_residual (or add) followed by layer_norm / layer_norm_modulate, one pass fewer over x.
// Gate rows m = r / rows_per_mod at gate + m·gate_stride (or mod_stride), fp32. x, res, y of one
// `type`; y must not alias x or res. cudaErrorNotSupported (nothing launched) when the row has no
// register shape or a pointer is not 16-byte aligned: the caller then runs the two ops.
cudaError_t residual_layer_norm(void* x, const void* res, const float* gate, int64_t gate_stride,
                                int64_t rows_per_mod, const float* weight, const float* bias, void* y, FloatType type,
                                int64_t rows, int64_t width, float eps, cudaStream_t stream);
cudaError_t residual_layer_norm_modulate(void* x, const void* res, const float* gate, const float* shift,
                                         const float* scale, int64_t mod_stride, int64_t rows_per_mod, void* y,
                                         FloatType type, int64_t rows, int64_t width, float eps,
                                         cudaStream_t stream);

// layer_norm / layer_norm_modulate / residual_layer_norm_modulate whose output goes straight into
// a GEMM's per-token quantised form: x8 [rows, width] (16-byte aligned) and x8_scale [rows] are
// quantize_rows_fp8 (e4m3, linear_fp8's input) or, with int8, quantize_rows_int8 (INT8 bytes stored
// through x8 as int8_t, linear_int8's input) of the y the op would store in y_type, bit for bit; no
// y is written (one pass over a row instead of the norm's write and the quantisation's read).
// Register rows with width a multiple of 16 only: cudaErrorNotSupported (nothing launched)
// otherwise, the caller then runs the norm and the row quantisation.
cudaError_t layer_norm_fp8(const void* x, FloatType x_type, const float* weight, const float* bias, FloatType y_type,
                           uint8_t* x8, float* x8_scale, int64_t rows, int64_t width, float eps, cudaStream_t stream,
                           bool int8 = false);
cudaError_t layer_norm_modulate_fp8(const void* x, FloatType x_type, const float* shift, const float* scale,
                                    int64_t mod_stride, int64_t rows_per_mod, FloatType y_type, uint8_t* x8,
                                    float* x8_scale, int64_t rows, int64_t width, float eps, cudaStream_t stream,
                                    bool int8 = false);
cudaError_t residual_layer_norm_modulate_fp8(void* x, const void* res, const float* gate, const float* shift,
                                             const float* scale, int64_t mod_stride, int64_t rows_per_mod,
                                             FloatType type, uint8_t* x8, float* x8_scale, int64_t rows,
                                             int64_t width, float eps, cudaStream_t stream, bool int8 = false);

// RMSNorm (rms_norm_ref) with weight [width] of w_type (f32 or bf16) or null; x and y one type.
// f32: y = x·rs·w. bf16: y = bf16(bf16(x·rs)·w), PyTorch's composite rms_norm (§1.4.5).
// (Implemented by the rms_norm_rope kernel without tables.)
cudaError_t rms_norm(const void* x, const void* weight, FloatType w_type, void* y, FloatType type, int64_t rows,
                     int64_t width, float eps, cudaStream_t stream);

}  // namespace vgen::kern
