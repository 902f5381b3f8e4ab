// Tensor-level ops of the Wan 2.2 VAE decoder (the residual up blocks' DupUp3D shortcut and the
// unpatchify of the decoder's output), dispatched by device in the layout of ops/vae_ops.h:
// [C, t, H, W] f32 on the host (the CPU references of kernels/vae_up/), channels-last
// [t, H, W, C] in f32 or bf16 on the device (kernels/vae_up/vae_up.cuh).
#pragma once
#include "core/tensor.h"

namespace vgen {

// DupUp3D(Cin → cout, factor_t, factor_s) of the block input x [Cin, t, H, W], restricted to the
// time phase `phase` < factor_t of every input frame, added into y [Cy >= cout, t, fs·H, fs·W] (the
// upsampler's output frames of that phase): y[o, τ, fs·h + b, fs·w + d] += x[j / r, τ, h, w] with
// j = ((o·ft + phase)·fs + b)·fs + d and r = cout·ft·fs² / Cin (kernels/vae_up/vae_up_ref.h).
// diffusers' first_chunk keeps phase ft − 1 alone.
void vae_dup_up_add_(Tensor& y, const Tensor& x, int64_t cout, int64_t factor_t, int64_t factor_s, int64_t phase);

// The sub-pixel upsampler's shuffle (vae_subpixel_shuffle of r into C channels) with the DupUp3D
// add of x (factor_s 2, cout C, time phase `phase`) → y [C, t, 2H, 2W]: on the device one pass
// (the upsampled frame written once), on the host the two ops in turn; the same values.
Tensor vae_subpixel_shuffle_dup_up(const Tensor& r, int64_t C, const Tensor& x, int64_t factor_t, int64_t phase);

// Decoder output with unpatchify (patch p): channels [0, C·p²) of frames x [Cx, t, H, W] → frames
// [f0, f0 + t) of video [C, F, p·H, p·W] f32 on x's device, video[c, f, p·h + r, p·w + q] =
// clamp(x[(c·p + q)·p + r, f, h, w], lo, hi) (diffusers' unpatchify, then the decode's clamp).
void vae_write_frames_unpatchify(const Tensor& x, int64_t C, int64_t p, float lo, float hi, Tensor& video,
                                 int64_t f0);

// The device side of the ops above (vae_up_ops_cuda.cpp); in a CPU-only build they throw kUsage.
void cuda_vae_dup_up_add_(Tensor& y, const Tensor& x, int64_t cout, int64_t factor_t, int64_t factor_s,
                          int64_t phase);
Tensor cuda_vae_subpixel_shuffle_dup_up(const Tensor& r, int64_t C, const Tensor& x, int64_t factor_t,
                                        int64_t phase);
void cuda_vae_write_frames_unpatchify(const Tensor& x, int64_t C, int64_t p, float lo, float hi, Tensor& video,
                                      int64_t f0);

}  // namespace vgen
