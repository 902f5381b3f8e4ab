#include "ops/norm_fp8.h"

#include "ops/dit_device_ops.h"

namespace vgen {

std::optional<Fp8Activation> layer_norm_fp8(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                                             GemmFormat format) {
  Fp8Activation q;
  if (x.is_cpu() || !cuda_layer_norm_fp8(x, weight, bias, eps, q, format)) return std::nullopt;
  return q;
}

std::optional<Fp8Activation> residual_layer_norm_modulate_fp8(Tensor& x, const Tensor& y, const Tensor& gate_mod,
                                                              int gate_idx, const Tensor& mod, int shift_idx,
                                                              int scale_idx, float eps, GemmFormat format,
                                                              bool fused) {
  if (x.is_cpu() || (y.defined() && !fused)) return std::nullopt;
  Fp8Activation q;
  const bool ran = y.defined() ? cuda_residual_layer_norm_modulate_fp8(x, y, gate_mod, gate_idx, mod, shift_idx,
                                                                       scale_idx, eps, q, format)
                               : cuda_layer_norm_modulate_fp8(x, mod, shift_idx, scale_idx, eps, q, format);
  if (!ran) return std::nullopt;
  return q;
}

}  // namespace vgen
