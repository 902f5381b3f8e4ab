// CPU references of the small elementwise / layout ops of the Wan VAE decoder (fp32).
// The CUDA launchers in vae_ops.cuh have the same contracts.
#pragma once
#include <cstdint>

namespace vgen::kern {

// y = x·sigmoid(x), n elements; y may equal x.
void silu_ref(const float* x, float* y, int64_t n);

// Nearest-neighbour ×2 in both spatial dims: x [P, H, W] → y [P, 2H, 2W] (P = every leading dim).
// Equals PyTorch 'nearest' and 'nearest-exact' for an integer factor of 2.
// The definition the decoder's sub-pixel upsampler (kernels/vae_subpixel) is checked against.
void upsample_nearest2x_ref(const float* x, float* y, int64_t P, int64_t H, int64_t W);

// y = clamp(x, lo, hi), n elements; y may equal x.
void clamp_ref(const float* x, float* y, int64_t n, float lo, float hi);

// y += x, n elements.
void add_inplace_ref(float* y, const float* x, int64_t n);

// Wan upsample3d interleave: x [2, C, T, S] (time_conv output viewed as two channel halves) →
// y [C, 2T, S] with y[c, 2t+k] = x[k, c, t].
void time_interleave2_ref(const float* x, float* y, int64_t C, int64_t T, int64_t S);

}  // namespace vgen::kern
