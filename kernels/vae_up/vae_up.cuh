// CUDA launchers of the Wan 2.2 VAE decoder's layout ops (contracts of vae_up_ref.h in the device
// decoder's channels-last layout). Element types f32 or bf16 (fp32 arithmetic, one rounding into
// the output type). Raw device pointers; queued on `stream`; returns the launch status. Never
// includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// dup_up_add_ref channels-last: x [T, H, W, Cin], y [T, fs·H, fs·W, Cy] (Cy >= Cout),
//   y[t, fs·h + b, fs·w + d, o] += x[t, h, w, j / r],  j = ((o·ft + phase)·fs + b)·fs + d,
// r = Cout·ft·fs² / Cin; cudaErrorInvalidValue when that is no integer or phase >= ft.
cudaError_t vae_dup_up_add(void* y, const void* x, FloatType type, int64_t T, int64_t H, int64_t W, int64_t Cin,
                           int64_t Cout, int64_t Cy, int64_t ft, int64_t fs, int64_t phase, cudaStream_t stream);

// The sub-pixel shuffle (kernels/vae_subpixel: r [T, H + 1, W + 1, Cr] → [T, 2H, 2W, C]) with the
// DupUp3D add of x [T, H, W, Cin] (fs 2, Cout = Cy = C) into y [T, 2H, 2W, C] in one pass; equal to
// vae_subpixel_shuffle followed by vae_dup_up_add.
cudaError_t vae_shuffle_dup_up(const void* r, const void* x, void* y, FloatType type, int64_t T, int64_t H, int64_t W,
                               int64_t Cr, int64_t C, int64_t Cin, int64_t ft, int64_t phase, cudaStream_t stream);

// unpatchify_clamp_ref from channels-last x [T, H, W, Cx] (x_type) into fp32 channels-first y:
//   y[c·c_stride + (t·p·H + p·h + r)·p·W + p·w + q] = clamp(x[t, h, w, (c·p + q)·p + r], lo, hi).
cudaError_t vae_unpatchify_to_channels_first(const void* x, FloatType x_type, float* y, int64_t T, int64_t H,
                                             int64_t W, int64_t Cx, int64_t C, int64_t p, int64_t c_stride, float lo,
                                             float hi, cudaStream_t stream);

}  // namespace vgen::kern
