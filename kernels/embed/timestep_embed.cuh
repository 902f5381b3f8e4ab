// CUDA launcher of the sinusoidal timestep embedding with the contract of timestep_embed_ref.h
// (fp32 in diffusers' order, accurate expf/sinf/cosf). t [n] fp32 → out [n, dim] fp32 on the
// device. Queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

cudaError_t timestep_embedding(const float* t, float* out, int64_t n, int64_t dim, bool flip_sin_to_cos,
                               float freq_shift, float max_period, cudaStream_t stream);

}  // namespace vgen::kern
