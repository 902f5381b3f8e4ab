// Tensor-level activations (kernels/activation), host or device tensors (device: f32/bf16 in,
// same dtype out).
#pragma once
#include "core/tensor.h"

namespace vgen {

Tensor gelu_tanh(const Tensor& x);
Tensor silu(const Tensor& x);
void gelu_tanh_(Tensor& x);  // in place
void gelu_erf_(Tensor& x);   // in place: exact GELU, 0.5·x·(1 + erf(x/√2))
void silu_(Tensor& x);       // in place
void quick_gelu_(Tensor& x); // in place: x·sigmoid(1.702·x)

}  // namespace vgen
