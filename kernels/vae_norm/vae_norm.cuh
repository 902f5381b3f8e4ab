// CUDA launchers of the Wan VAE channel RMS norm (contract of vae_norm_ref.h):
//   y[.., c, ..] = x / max(‖x over C‖₂, eps) · √C · γ[c]   (+ SiLU y·sigmoid(y) when `silu`)
// in fp32 arithmetic (sum of squares in fp32), one rounding into y's type. x and y are f32 or bf16
// (independently), gamma fp32. Two layouts:
//   kChannelsFirst: x, y [N, C, S] — exactly vae_norm_ref's layout;
//   kChannelsLast:  x, y [P, C] (P positions, channels contiguous) — the device decoder's layout.
// y may equal x (same type) but must not overlap it otherwise. Raw device pointers; queued on
// `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

enum class VaeLayout : uint8_t { kChannelsFirst, kChannelsLast };

// Channels-first: N batches of [C, S]. Channels-last: N·S positions of C channels (N and S only
// multiply: the position count is N·S).
cudaError_t vae_rms_norm(const void* x, FloatType x_type, const float* gamma, void* y, FloatType y_type, int64_t N,
                         int64_t C, int64_t S, bool silu, VaeLayout layout, cudaStream_t stream,
                         float eps = 1e-12f);

}  // namespace vgen::kern
