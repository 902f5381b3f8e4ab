// The norms of ops/norm.h with their output straight in the per-token quantised input of fp8
// GEMMs (precision fp8, ops/fp8.h): the values of the norm followed by cuda_quantize_activation in
// `format`, in one pass that never writes the norm's output (kern::*_fp8). Nullopt, with nothing
// done (x untouched), on the host (its fp8 linears quantise their input themselves) and where the
// device's fused kernel does not apply (a row without a register shape, a width not a multiple
// of 16): then run the norm.
#pragma once
#include <optional>

#include "core/tensor.h"
#include "ops/fp8.h"

namespace vgen {

std::optional<Fp8Activation> layer_norm_fp8(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps,
                                             GemmFormat format);
// residual_layer_norm_modulate into a quantised input: y undefined, the AdaLN alone; y defined and
// not `fused`, nullopt (the residual runs as its own op).
std::optional<Fp8Activation> residual_layer_norm_modulate_fp8(Tensor& x, const Tensor& y, const Tensor& gate_mod,
                                                              int gate_idx, const Tensor& mod, int shift_idx,
                                                              int scale_idx, float eps, GemmFormat format,
                                                              bool fused = true);

}  // namespace vgen
