// Tensor-level ops of the Wan VAE encoder's down direction, dispatched by device like
// ops/vae_ops.h (host: activations [C, t, H, W] f32, the CPU references of kernels/vae_down/;
// device: channels-last [t, H, W, C] in f32 or bf16, the kernels of kernels/vae_down/ and the
// strided kernels/conv3d). The encoder (model/wan/vae/vae_encoder.h) is written once against these.
#pragma once
#include "core/tensor.h"
#include "ops/vae_ops.h"

namespace vgen {

// Frames [f0, f0 + n) of a channels-first video [C, F, H, W] f32 (any device) → a contiguous
// [C, n, H, W] f32 on the same device.
Tensor vae_video_frames(const Tensor& video, int64_t f0, int64_t n);

// The encoder's input activation: video frames [C, t, H, W] f32 on y's device, patchified with
// patch p (diffusers' patchify; p = 1 leaves the pixels) into y: host [C·p², t, H/p, W/p] f32, device
// [t, H/p, W/p, C·p²] of y's dtype (y may be the body of a conv buffer).
void vae_patchify_into(const Tensor& frames, int64_t patch, Tensor& y);

// The conv of `c` over the activation x with strides (stride_t frames, stride_s both spatial dims)
// and spatial zero padding `pad`, no temporal padding and no cache → [Cout_s, To, Ho, Wo] (device
// [To, Ho, Wo, Cout_s]) with To = (t − kt) / stride_t + 1, Ho = (H + top + bottom − kh) / stride_s + 1.
// `conv`: the device conv's backend (the host runs the reference).
Tensor vae_strided_conv(const VaeConvWeights& c, const Tensor& x, const Conv3dPad& pad, int64_t stride_t,
                        int64_t stride_s, const VaeConvPolicy& conv);

// y += AvgDown3D(x) (Wan 2.2's residual down-block shortcut): x [Cin, t, H, W] → ceil(t / ft) frames
// of H/fs × W/fs with y's channels (kern::avg_down_add_ref); x and y of one dtype.
void vae_avg_down_add_(Tensor& y, const Tensor& x, int64_t factor_t, int64_t factor_s);

// [a, b] along time: activations of one layout, dtype and frame size → a new activation.
Tensor vae_cat_frames(const Tensor& a, const Tensor& b);

// Device sides of the ops above (ops/vae_down_ops_cuda.cpp; a CPU-only build throws kUsage).
Tensor cuda_vae_conv3d_strided(const Tensor& x, const Tensor& w, const Tensor& b, const kern::Conv3dPad& pad,
                               int64_t stride_t, int64_t stride_s, const VaeConvPolicy& policy);
void cuda_vae_patchify(const Tensor& frames, int64_t patch, Tensor& y);
void cuda_vae_avg_down_add_(Tensor& y, const Tensor& x, int64_t factor_t, int64_t factor_s);

}  // namespace vgen
