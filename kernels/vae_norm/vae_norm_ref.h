// CPU reference channel RMS norm of the Wan VAE (WanRMS_norm, channel-first), fp32.
// The CUDA launcher in vae_norm.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// x, y [N, C, S] (S = T·H·W or H·W), gamma [C]:
//   y[n,c,s] = x[n,c,s] / max(‖x[n,:,s]‖₂, eps) · √C · gamma[c]   (F.normalize(x, dim=1)·scale·γ)
// followed by SiLU y·sigmoid(y) when `silu` is set (norm → SiLU is how every Wan conv input is made).
// y may equal x (in place).
void vae_rms_norm_ref(const float* x, const float* gamma, float* y, int64_t N, int64_t C, int64_t S, bool silu,
                      float eps = 1e-12f);

}  // namespace vgen::kern
