// Tensor-level embeddings of the DiT: sinusoidal timestep embedding, patch gather, unpatchify
// (kernels/embed). Device tensors run the CUDA launchers (t f32; patch data f32 or bf16, the result
// in the input's dtype).
#pragma once
#include <array>

#include "core/tensor.h"

namespace vgen {

// t [N] f32 (or i64, converted) → [N, dim] (diffusers Timesteps; see kernels/embed/timestep_embed_ref.h).
Tensor timestep_embedding(const Tensor& t, int64_t dim, bool flip_sin_to_cos, float freq_shift,
                          float max_period = 10000.0f);

// Row gather (an embedding lookup): table [U, N] f32, index [R] i64 on the table's device with every
// value in [0, U) (checked on the host) → [R, N] f32, row r = table[index[r]]. Exact.
Tensor gather_rows(const Tensor& table, const Tensor& index);

// x [B, C, T, H, W] → [B, count, C·pt·ph·pw] for global tokens [begin, begin + count); padding
// tokens (>= S) are zero rows. The result in `out_dtype` (the host gathers in f32, then casts),
// or in x's dtype.
Tensor patchify(const Tensor& x, const std::array<int, 3>& patch, int64_t begin, int64_t count, DType out_dtype);
inline Tensor patchify(const Tensor& x, const std::array<int, 3>& patch, int64_t begin, int64_t count) {
  return patchify(x, patch, begin, count, x.dtype());
}

// tokens [B, S, pt·ph·pw·C] → [B, C, T, H, W], in `out_dtype` as patchify's, or in the tokens' dtype.
Tensor unpatchify(const Tensor& tokens, const std::array<int, 3>& patch, int64_t C, int64_t T, int64_t H, int64_t W,
                  DType out_dtype);
inline Tensor unpatchify(const Tensor& tokens, const std::array<int, 3>& patch, int64_t C, int64_t T, int64_t H,
                         int64_t W) {
  return unpatchify(tokens, patch, C, T, H, W, tokens.dtype());
}

}  // namespace vgen
