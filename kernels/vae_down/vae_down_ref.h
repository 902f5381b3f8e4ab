// CPU references (fp32, channels-first) of the Wan VAE encoder's down-direction ops: the strided
// convolution of the downsamplers (ZeroPad2d((0, 1, 0, 1)) + stride-2 Conv2d, and the stride-2
// (3, 1, 1) time_conv), diffusers' patchify, and AvgDown3D (the Wan 2.2 residual down block's
// shortcut). The CUDA versions (vae_down.cuh, and the strides of kernels/conv3d/conv3d.cuh) compute
// the same sums in the device encoder's channels-last layout.
#pragma once
#include <cstdint>

#include "kernels/conv3d/conv3d_ref.h"

namespace vgen::kern {

// x [Cin, Ti, Hi, Wi] (one batch item), w [Cout, Cin, kt, kh, kw], bias [Cout] or null →
// y [Cout, To, Ho, Wo], y[co, to, ho, wo] = bias[co] + Σ w[co, ci, dt, dh, dw] ·
// x[ci, stride_t·to + dt, stride_s·ho + dh − top, stride_s·wo + dw − left] (zero outside x),
// To = (Ti − kt) / stride_t + 1, Ho = (Hi + top + bottom − kh) / stride_s + 1, Wo likewise (floor).
// One GEMM per output frame and tap over the gathered strided input.
void conv3d_strided_ref(const float* x, const float* w, const float* bias, float* y, int64_t Cin, int64_t Ti,
                        int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw, const Conv3dPad& pad,
                        int64_t stride_t, int64_t stride_s);

// diffusers' patchify (view [C, T, H/p, p, W/p, p], permute to (c, q, r, t, h, w)):
// x [C, T, H, W] → y [C·p·p, T, H/p, W/p], y[(c·p + q)·p + r, t, h, w] = x[c, t, h·p + r, w·p + q]
// (q the offset along W, r along H). H and W multiples of p.
void patchify_ref(const float* x, float* y, int64_t C, int64_t T, int64_t H, int64_t W, int64_t p);

// Output frames of AvgDown3D over T input frames: ceil(T / ft) (pad_t zero frames in front).
inline int64_t avg_down_frames(int64_t T, int64_t ft) { return (T + ft - 1) / ft; }

// y += AvgDown3D(x): x [Cin, T, H, W] gets pad_t = (ft − T mod ft) mod ft zero frames in front, is
// viewed as Cin·ft·fs·fs channels (c, a, p, q) of [T', H/fs, W/fs] with the input at
// (τ·ft + a − pad_t, h·fs + p, w·fs + q), and output channel o averages the g = Cin·ft·fs²/Cout
// consecutive channels [o·g, (o + 1)·g) of that view; y [Cout, T', H/fs, W/fs], T' = avg_down_frames.
void avg_down_add_ref(const float* x, float* y, int64_t Cin, int64_t T, int64_t H, int64_t W, int64_t Cout,
                      int64_t ft, int64_t fs);

}  // namespace vgen::kern
