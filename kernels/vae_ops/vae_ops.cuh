// CUDA launchers of the Wan VAE decoder's elementwise / layout ops (contracts of vae_ops_ref.h,
// generalised to the device decoder's channels-last layout). Element types f32 or bf16 (fp32
// arithmetic, one rounding into the output type). Raw device pointers; queued on `stream`;
// returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// y = x·sigmoid(x), n elements of `type`; y may equal x (silu_ref).
cudaError_t vae_silu(const void* x, void* y, FloatType type, int64_t n, cudaStream_t stream);

// y = clamp(x, lo, hi), n elements; y may equal x (clamp_ref).
cudaError_t vae_clamp(const void* x, void* y, FloatType type, int64_t n, float lo, float hi, cudaStream_t stream);

// y += x, n elements of `type` (add_inplace_ref).
cudaError_t vae_add_inplace(void* y, const void* x, FloatType type, int64_t n, cudaStream_t stream);

// Wan upsample3d interleave. Channels-first (time_interleave2_ref): x [2, C, T, S] → y [C, 2T, S],
// y[c, 2t+k] = x[k, c, t]. Channels-last: x [T, S, 2C] → y [2T, S, C], y[2t+k, s, c] = x[t, s, k·C + c].
cudaError_t vae_time_interleave2(const void* x, void* y, FloatType type, int64_t C, int64_t T, int64_t S,
                                 bool channels_last, cudaStream_t stream);

// Decoder output: channels-last x [T, S, Cx] (x_type) → fp32 channels-first
// y[c·c_stride + t·S + s] = clamp(x[t, s, c], lo, hi) for c < C <= Cx (Cx may carry zero padding
// channels of conv_out). c_stride >= T·S lets y be a frame range inside a longer video [C, F, S].
cudaError_t vae_to_channels_first(const void* x, FloatType x_type, float* y, int64_t T, int64_t S, int64_t Cx,
                                  int64_t C, int64_t c_stride, float lo, float hi, cudaStream_t stream);

}  // namespace vgen::kern
