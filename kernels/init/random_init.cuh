// Deterministic device initialisation for benchmark models (random weights of real shapes):
// a hash of (seed, index) gives each element its value, so no host data and no curand state.
// Queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// dst[i] ~ N(mean, std²) (Box–Muller on two hashed uniforms), stored as `type`.
cudaError_t fill_normal(void* dst, FloatType type, int64_t n, uint64_t seed, float mean, float std,
                        cudaStream_t stream);

// dst[i] = value.
cudaError_t fill_constant(void* dst, FloatType type, int64_t n, float value, cudaStream_t stream);

}  // namespace vgen::kern
