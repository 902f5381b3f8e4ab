// Tensor-level device paths of the DiT op families (kernels/{norm,rope,elementwise,activation,
// embed}/*.cuh). The host wrappers in ops/{norm,rope,elementwise,activation,embed}.h call these for
// device tensors, so code written against those wrappers runs on either device.
//
// Device contract: activations are f32 or bf16 and the result has the dtype of the main input x
// (bf16 in, bf16 out: one rounding of the fp32 result, wan_spec.md §1.4); modulation tensors
// (`mod`, the add_row row) are fp32; LayerNorm weight/bias fp32; RMSNorm weight f32 or bf16; RoPE
// tables fp32. Everything is queued on compute_stream(). In a CPU-only build every function throws
// kUsage.
#pragma once
#include <array>

#include "core/tensor.h"
#include "ops/fp8.h"

namespace vgen {

Tensor cuda_layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps);
Tensor cuda_layer_norm_modulate(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps);
// The residual update fused with the norm that reads it: x += y·gate (row gate_idx of gate_mod,
// as cuda_gated_residual_; gate_idx < 0: x += y, as cuda_add_inplace) in place, then the norm of
// the updated x, in one pass over x (kern::residual_layer_norm*). Takes the two separate ops when
// the fused kernel does not apply (a row width without a register shape); same values either way.
Tensor cuda_residual_layer_norm(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                const Tensor& weight, const Tensor& bias, float eps);
Tensor cuda_residual_layer_norm_modulate(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                         const Tensor& mod, int shift_idx, int scale_idx, float eps);
// The same norms with their output straight in a per-token quantised GEMM input (kern::*_fp8):
// `out` gets cuda_quantize_activation(<the tensor they would return>, format) bit for bit (x8 u8
// e4m3 or i8 INT8, by format), and that tensor is never written. False, with nothing done (x
// untouched), where the fused kernel does not apply (a row without a register shape, a width not a
// multiple of 16): then run the norm and quantise.
bool cuda_layer_norm_fp8(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, Fp8Activation& out,
                         GemmFormat format = GemmFormat::kE4m3);
bool cuda_layer_norm_modulate_fp8(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps,
                                  Fp8Activation& out, GemmFormat format = GemmFormat::kE4m3);
bool cuda_residual_layer_norm_modulate_fp8(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                           const Tensor& mod, int shift_idx, int scale_idx, float eps,
                                           Fp8Activation& out, GemmFormat format = GemmFormat::kE4m3);
Tensor cuda_rms_norm(const Tensor& x, const Tensor& weight, float eps);
// x [B, S, H, Dh]: RMSNorm over H·Dh with weight [H·Dh], then RoPE with cos/sin [S, Dh] → new tensor.
Tensor cuda_rms_norm_rope(const Tensor& x, const Tensor& weight, const Tensor& cos, const Tensor& sin, float eps);
void cuda_rope_(Tensor& x, const Tensor& cos, const Tensor& sin);

void cuda_add_inplace(Tensor& x, const Tensor& y);
Tensor cuda_sub(const Tensor& a, const Tensor& b);
// f32 [2] on the device: Σ|a − b|, Σ|b| (kernels/reduce; deterministic).
Tensor cuda_abs_diff_sums(const Tensor& a, const Tensor& b);
Tensor cuda_add_row(const Tensor& x, const Tensor& row);
void cuda_gated_residual_(Tensor& x, const Tensor& y, const Tensor& mod, int gate_idx);
Tensor cuda_cfg_combine(const Tensor& cond, const Tensor& uncond, float scale);
// x [R, ...] with row r times scale[r] (f32 [R]) → new tensor: a per-output gate folded into a
// Linear's weight [N, K] or bias [N].
Tensor cuda_scale_rows(const Tensor& x, const Tensor& scale);

Tensor cuda_gelu_tanh(const Tensor& x);
Tensor cuda_silu(const Tensor& x);
void cuda_gelu_tanh_(Tensor& x);
void cuda_silu_(Tensor& x);
void cuda_gelu_erf_(Tensor& x);
void cuda_quick_gelu_(Tensor& x);

// t [N] f32 on the device → [N, dim] f32.
Tensor cuda_timestep_embedding(const Tensor& t, int64_t dim, bool flip_sin_to_cos, float freq_shift, float max_period);
// table [U, N] f32, index [R] i64 (values in [0, U), not checked on the device) → [R, N] f32.
Tensor cuda_gather_rows(const Tensor& table, const Tensor& index);
// x [B, C, T, H, W] → [B, count, C·pt·ph·pw] of out_dtype; unpatchify tokens → [B, C, T, H, W] of out_dtype.
Tensor cuda_patchify(const Tensor& x, const std::array<int, 3>& patch, int64_t begin, int64_t count, DType out_dtype);
Tensor cuda_unpatchify(const Tensor& tokens, const std::array<int, 3>& patch, int64_t C, int64_t T, int64_t H,
                       int64_t W, DType out_dtype);

// Deterministic device fills (benchmarks with random weights): N(mean, std²) or a constant.
void cuda_fill_normal(Tensor& t, uint64_t seed, float mean, float std);
void cuda_fill_constant(Tensor& t, float value);

}  // namespace vgen
