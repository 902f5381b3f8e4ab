// CPU reference of the sinusoidal timestep embedding (diffusers get_timestep_embedding), fp32.
// CUDA: timestep_embed.cuh.
#pragma once
#include <cstdint>

namespace vgen::kern {

// out [n, dim] for t [n]: half = dim/2, freq[k] = exp(−ln(max_period)·k / (half − freq_shift)),
// a = t·freq; rows are [sin(a) | cos(a)], or [cos(a) | sin(a)] with flip_sin_to_cos; an odd dim
// leaves a zero last column.
void timestep_embedding_ref(const float* t, float* out, int64_t n, int64_t dim, bool flip_sin_to_cos,
                            float freq_shift, float max_period);

}  // namespace vgen::kern
