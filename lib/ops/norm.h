// Tensor-level normalisations: dispatch to kernels/norm by device (host: fp32 references; device:
// f32 or bf16 activations, the result in x's dtype, see ops/dit_device_ops.h).
#pragma once
#include "core/tensor.h"

namespace vgen {

// LayerNorm over the last dim; weight/bias [D] or undefined (no affine). x [..., D] → [..., D].
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps);

// AdaLN: LN(x)·(1 + mod[.., scale_idx]) + mod[.., shift_idx].
// x [B, S, D]; mod [B, M, D] (one modulation per sample) or [B, S, M, D] (per token).
Tensor layer_norm_modulate(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps);

// The residual update of x fused with the norm that reads x next: x += y·gate_mod[.., gate_idx]
// in place (gate_idx < 0: x += y; y undefined: no update), then layer_norm_modulate (or
// layer_norm) of the updated x. Device with `fused`: one pass over x (cuda_residual_layer_norm*,
// the same values); otherwise, and on the host, gated_residual_ or add_inplace, then the norm.
Tensor residual_layer_norm_modulate(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                    const Tensor& mod, int shift_idx, int scale_idx, float eps, bool fused = true);
Tensor residual_layer_norm(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx, const Tensor& weight,
                           const Tensor& bias, float eps, bool fused = true);

// RMSNorm over the last dim with weight [D] (or undefined). x [..., D] → [..., D].
Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps);

// Modulation addressing shared by layer_norm_modulate and gated_residual_: for x [B, S, D] and
// mod [B, M, D] or [B, S, M, D], the pointer offset of row `idx`, the stride between modulation
// rows and the number of x rows per modulation row.
struct ModAddress {
  int64_t offset = 0, stride = 0, rows_per_mod = 0;
};
ModAddress mod_address(const Tensor& x, const Tensor& mod, int idx, const char* op);

}  // namespace vgen
