#include "ops/norm.h"

#include "kernels/norm/norm_ref.h"
#include "ops/check.h"
#include "ops/dit_device_ops.h"
#include "ops/elementwise.h"

namespace vgen {

ModAddress mod_address(const Tensor& x, const Tensor& mod, int idx, const char* op) {
  VGEN_ASSERT(x.ndim() == 3, "{}: x must be [B, S, D], got {}", op, x.str());
  const int64_t B = x.dim(0), S = x.dim(1), D = x.dim(2);
  ModAddress a;
  if (mod.ndim() == 3) {
    VGEN_ASSERT(mod.dim(0) == B && mod.dim(2) == D && idx >= 0 && idx < mod.dim(1), "{}: mod {} row {} for x {}", op,
                mod.str(), idx, x.str());
    a.stride = mod.dim(1) * D;
    a.rows_per_mod = S;
  } else {
    VGEN_ASSERT(mod.ndim() == 4 && mod.dim(0) == B && mod.dim(1) == S && mod.dim(3) == D && idx >= 0 &&
                    idx < mod.dim(2),
                "{}: mod {} row {} for x {}", op, mod.str(), idx, x.str());
    a.stride = mod.dim(2) * D;
    a.rows_per_mod = 1;
  }
  a.offset = int64_t(idx) * D;
  if (a.rows_per_mod == 0) a.rows_per_mod = 1;  // S == 0: no rows to address
  return a;
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  if (x.defined() && !x.is_cpu()) return cuda_layer_norm(x, weight, bias, eps);
  check_cpu_f32(x, "layer_norm", "x");
  const int64_t D = x.dim(-1);
  if (weight.defined()) {
    check_cpu_f32(weight, "layer_norm", "weight");
    VGEN_ASSERT(weight.numel() == D, "layer_norm: weight {} for x {}", weight.str(), x.str());
  }
  if (bias.defined()) {
    check_cpu_f32(bias, "layer_norm", "bias");
    VGEN_ASSERT(bias.numel() == D, "layer_norm: bias {} for x {}", bias.str(), x.str());
  }
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::layer_norm_ref(x.f32(), weight.defined() ? weight.f32() : nullptr, bias.defined() ? bias.f32() : nullptr,
                       y.f32(), D ? x.numel() / D : 0, D, eps);
  return y;
}

Tensor layer_norm_modulate(const Tensor& x, const Tensor& mod, int shift_idx, int scale_idx, float eps) {
  if (x.defined() && !x.is_cpu()) return cuda_layer_norm_modulate(x, mod, shift_idx, scale_idx, eps);
  check_cpu_f32(x, "layer_norm_modulate", "x");
  check_cpu_f32(mod, "layer_norm_modulate", "mod");
  ModAddress sh = mod_address(x, mod, shift_idx, "layer_norm_modulate");
  ModAddress sc = mod_address(x, mod, scale_idx, "layer_norm_modulate");
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  const int64_t D = x.dim(2);
  kern::layer_norm_modulate_ref(x.f32(), mod.f32() + sh.offset, mod.f32() + sc.offset, sh.stride, sh.rows_per_mod,
                                y.f32(), x.dim(0) * x.dim(1), D, eps);
  return y;
}

namespace {

// x += y·gate_mod[.., gate_idx] (gate_idx < 0: x += y; y undefined: nothing).
void residual_add_(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx) {
  if (!y.defined()) return;
  if (gate_idx < 0)
    add_inplace(x, y);
  else
    gated_residual_(x, y, gate_mod, gate_idx);
}

}  // namespace

Tensor residual_layer_norm_modulate(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                                    const Tensor& mod, int shift_idx, int scale_idx, float eps, bool fused) {
  if (fused && y.defined() && !x.is_cpu())
    return cuda_residual_layer_norm_modulate(x, y, gate_mod, gate_idx, mod, shift_idx, scale_idx, eps);
  residual_add_(x, y, gate_mod, gate_idx);
  return layer_norm_modulate(x, mod, shift_idx, scale_idx, eps);
}

Tensor residual_layer_norm(Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx, const Tensor& weight,
                           const Tensor& bias, float eps, bool fused) {
  if (fused && y.defined() && !x.is_cpu()) return cuda_residual_layer_norm(x, y, gate_mod, gate_idx, weight, bias, eps);
  residual_add_(x, y, gate_mod, gate_idx);
  return layer_norm(x, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps) {
  if (x.defined() && !x.is_cpu()) return cuda_rms_norm(x, weight, eps);
  check_cpu_f32(x, "rms_norm", "x");
  const int64_t D = x.dim(-1);
  if (weight.defined()) {
    check_cpu_f32(weight, "rms_norm", "weight");
    VGEN_ASSERT(weight.numel() == D, "rms_norm: weight {} for x {}", weight.str(), x.str());
  }
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::rms_norm_ref(x.f32(), weight.defined() ? weight.f32() : nullptr, y.f32(), D ? x.numel() / D : 0, D, eps);
  return y;
}

}  // namespace vgen
