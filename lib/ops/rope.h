// Tensor-level rotary embedding with interleaved pairs (kernels/rope), host or device tensors.
#pragma once
#include "core/tensor.h"

namespace vgen {

// In place: x [B, S, H, Dh]; cos, sin [S, Dh] per-token tables (see kernels/rope/rope_ref.h).
void rope_(Tensor& x, const Tensor& cos, const Tensor& sin);

// The QK path of the DiT's self-attention: RMSNorm over each token's H·Dh values with weight
// [H·Dh], then rope_ → new tensor. x [B, S, H, Dh]. On the device one fused kernel (bf16 rounds
// as the two ops would, kernels/rope/rope.cuh).
Tensor rms_norm_rope(const Tensor& x, const Tensor& weight, const Tensor& cos, const Tensor& sin, float eps);

}  // namespace vgen
