// CUDA launchers of the Wan VAE encoder's layout ops (contracts of vae_down_ref.h in the device
// encoder's channels-last layout; the strided convolution is kernels/conv3d with strides). Element
// types f32 or bf16 (fp32 arithmetic, one rounding into the output type). Raw device pointers;
// queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// The encoder's input: video frames x [C, T, H, W] fp32 channels-first → channels-last patchified
// y [T, H/p, W/p, C·p·p] of `type`, y[t, h, w, (c·p + q)·p + r] = x[c, t, h·p + r, w·p + q]
// (patchify_ref's channel order; p = 1 is the plain layout change). y may be a view with row
// pitch C·p·p (contiguous).
cudaError_t vae_patchify(const float* x, void* y, FloatType type, int64_t C, int64_t T, int64_t H, int64_t W,
                         int64_t p, cudaStream_t stream);

// y += AvgDown3D(x), channels-last: x [T, H, W, Cin], y [T', H/fs, W/fs, Cout] of one type,
// T' = ceil(T / ft) (avg_down_add_ref's math: zero frames in front, a mean of g consecutive channels
// of the (c, a, p, q) view, accumulated in fp32, one rounding of y + mean).
cudaError_t vae_avg_down_add(const void* x, void* y, FloatType type, int64_t Cin, int64_t T, int64_t H, int64_t W,
                             int64_t Cout, int64_t ft, int64_t fs, cudaStream_t stream);

}  // namespace vgen::kern
