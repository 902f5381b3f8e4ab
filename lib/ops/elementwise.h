// Tensor-level elementwise ops (kernels/elementwise), host or device tensors (device: f32/bf16,
// fp32 modulation and row, result in x's dtype; ops/dit_device_ops.h).
#pragma once
#include "core/tensor.h"

namespace vgen {

void add_inplace(Tensor& x, const Tensor& y);  // x += y (same numel)
Tensor sub(const Tensor& a, const Tensor& b);    // a − b (same numel), a's shape
// Σ|a − b| and Σ|b| (same numel) as f32 [2] on a's device (kernels/reduce, double sums).
Tensor abs_diff_sums(const Tensor& a, const Tensor& b);
// x [..., D] + row [D] broadcast over the leading dims → new tensor of x's shape.
Tensor add_row(const Tensor& x, const Tensor& row);
// Gated residual in place: x += y · mod[.., gate_idx]; x, y [B, S, D]; mod [B, M, D] or [B, S, M, D].
void gated_residual_(Tensor& x, const Tensor& y, const Tensor& mod, int gate_idx);
// uncond + scale·(cond − uncond), same shapes.
Tensor cfg_combine(const Tensor& cond, const Tensor& uncond, float scale);

}  // namespace vgen
