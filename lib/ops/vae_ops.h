// Tensor-level ops of the CPU Wan VAE decoder (the CPU references; the device decoder's
// channels-last ops are in ops/vae_device_ops.h, so device tensors are rejected here). All tensors
// f32 and contiguous.
#pragma once
#include "core/tensor.h"
#include "kernels/conv3d/conv3d_ref.h"

namespace vgen {

using kern::Conv3dPad;

// x [Cin, Ti, Hi, Wi], w [Cout, Cin, kt, kh, kw] or 2-D [Cout, Cin, kh, kw] (kt = 1), b [Cout] or
// undefined → [Cout, Tp+Ti−kt+1, Ho, Wo] (stride 1, spatial zero padding `pad`, no temporal padding).
// prev [Cin, Tp, Hi, Wi] (optional): frames in front of x, e.g. the causal cache.
Tensor vae_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dPad& pad,
                  const Tensor& prev = Tensor());

// x [C, ...] → x / max(‖x‖ over C, 1e-12) · √C · γ, optionally followed by SiLU. gamma has C elements.
Tensor vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu);

// x [P..., H, W] → [P..., 2H, 2W] nearest.
Tensor upsample_nearest2x(const Tensor& x);

// Wan upsample3d interleave: time_conv output x [2C, T, H, W] → [C, 2T, H, W], frame 2t+k taking
// channels [k·C, (k+1)·C) of frame t.
Tensor time_interleave2(const Tensor& x);

// In-place helpers.
void add_(Tensor& y, const Tensor& x);  // y += x, same numel
void clamp_(Tensor& t, float lo, float hi);

// Concatenates [C, T_i, H, W] tensors along T (dim 1).
Tensor cat_time(const Tensor& a, const Tensor& b);
// Frames [t0, t0+len) of x [C, T, H, W] (a copy).
Tensor slice_time(const Tensor& x, int64_t t0, int64_t len);

}  // namespace vgen
