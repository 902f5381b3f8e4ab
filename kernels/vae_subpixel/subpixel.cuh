// CUDA launchers of the sub-pixel upsampler (contracts of subpixel_ref.h in the device decoder's
// channels-last layout). Element types f32 or bf16 (fp32 arithmetic, one rounding into the output
// type). Raw device pointers; queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// subpixel_weight_ref on fp32 device tensors in the checkpoint layout (w3 [cout, cin, 3, 3] →
// w4 [4·cout, cin, 2, 2]); the conv layout's permute follows separately.
cudaError_t vae_subpixel_weight(const float* w3, float* w4, int64_t cout, int64_t cin, cudaStream_t stream);

// subpixel_shuffle_ref channels-last: r [T, H + 1, W + 1, Cr] with Cr >= 4·C (channels past 4·C
// ignored) → y [T, 2H, 2W, C], y[t, 2i + a, 2j + b, c] = r[t, i + a, j + b, (2a + b)·C + c].
cudaError_t vae_subpixel_shuffle(const void* r, void* y, FloatType type, int64_t T, int64_t H, int64_t W, int64_t Cr,
                                 int64_t C, cudaStream_t stream);

// Channels [c0, c0 + C) of x [P, Cx] into y [P, C] (a channel slice of a channels-last tensor).
cudaError_t vae_copy_channels(const void* x, void* y, FloatType type, int64_t P, int64_t Cx, int64_t c0, int64_t C,
                              cudaStream_t stream);

}  // namespace vgen::kern
