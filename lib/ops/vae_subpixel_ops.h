// The decoder's upsampler as a sub-pixel conv (kernels/vae_subpixel/subpixel_ref.h): nearest ×2
// then a 3×3 conv equals a 2×2 conv of the low-resolution frame into four phases, shuffled onto
// the ×2 grid, at 4/9 of the multiply-adds. Dispatched by device in the layout of ops/vae_ops.h:
// [C, t, H, W] f32 on the host, channels-last [t, H, W, C] in f32 or bf16 on the device.
#pragma once
#include "core/tensor.h"

namespace vgen {

// A Conv2d weight w3 f32 [cout, cin, 3, 3] (host or device, checkpoint layout) → the 2×2 conv's
// weight f32 [4·cout, cin, 2, 2] on the same device, phase p = 2a + b in rows [p·cout, (p+1)·cout).
Tensor vae_subpixel_weight(const Tensor& w3);

// The 2×2 conv's output r [4·C (or more), t, H + 1, W + 1] → y [C, t, 2H, 2W] (device: [t, H + 1,
// W + 1, Cr] → [t, 2H, 2W, C]), y[c, t, 2i + a, 2j + b] = r[(2a + b)·C + c, t, i + a, j + b].
Tensor vae_subpixel_shuffle(const Tensor& r, int64_t C);

// Channels [c0, c0 + C) of x into y (same frames and pixels; y preallocated, may be a view):
// the fill of a conv input that reads one half of a time_conv output.
void vae_channels_into(const Tensor& x, int64_t c0, int64_t C, Tensor& y);

// The device side (vae_subpixel_ops_cuda.cpp); in a CPU-only build they throw kUsage.
Tensor cuda_vae_subpixel_weight(const Tensor& w3);
Tensor cuda_vae_subpixel_shuffle(const Tensor& r, int64_t C);
void cuda_vae_channels_into(const Tensor& x, int64_t c0, int64_t C, Tensor& y);

}  // namespace vgen
