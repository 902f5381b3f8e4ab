// CPU references of the pointwise activations (fp32). y may alias x. CUDA: activation.cuh.
#pragma once
#include <cstdint>

// SiLU (y = x·sigmoid(x), y may alias x) is kern::silu_ref, defined once with the VAE ops.
#include "kernels/vae_ops/vae_ops_ref.h"

namespace vgen::kern {

// GELU, tanh approximation: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
void gelu_tanh_ref(const float* x, float* y, int64_t n);

// GELU, exact: 0.5·x·(1 + erf(x/√2)) (transformers' "gelu", e.g. the CLIP vision MLP).
void gelu_erf_ref(const float* x, float* y, int64_t n);

// QuickGELU: x·sigmoid(1.702·x) (transformers' "quick_gelu", OpenAI CLIP checkpoints).
void quick_gelu_ref(const float* x, float* y, int64_t n);

}  // namespace vgen::kern
