// Cosmos 3's 3D interleaved mRoPE (diffusers Cosmos3VLTextRotaryEmbedding and the pipeline's
// get_3d_mrope_ids_*): position ids of the prompt and of the vision grid, the rotation angles, and
// the per-token tables of ops/rope.h. Computed on the host in fp32 as diffusers does.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "model/cosmos3/config.h"

namespace vgen {

// Position ids of a prompt of `prompt_len` tokens followed by a vision grid (t, h, w) of patches:
// f32 [3, prompt_len + t·h·w]. Text tokens take 0..L−1 on every axis; the grid starts at
// L + temporal_margin on the time axis, which is scaled by base_fps / fps when fps modulation is on,
// `fps` is given and t > 1; h and w count from 0 (reset_spatial_ids) or from the same offset.
// `temporal_compression` is the VAE's temporal factor (frames per latent frame).
Tensor mrope_position_ids(const Cosmos3Config& cfg, int64_t prompt_len, const std::array<int64_t, 3>& grid,
                          std::optional<double> fps, int temporal_compression);

// Position ids of a prompt alone: f32 [3, prompt_len], 0..L−1 on every axis.
Tensor mrope_text_position_ids(int64_t prompt_len);

// inv_freq[j] = 1 / theta^(2j / head_dim), j < head_dim / 2, rounded as diffusers' fp32 computation.
std::vector<float> mrope_inv_freq(const Cosmos3Config& cfg);

// Rotation angle of every token and frequency after the interleaved layout (frequency j takes the
// h axis when j % 3 == 1 and j < 3·h, the w axis when j % 3 == 2 and j < 3·w, else t):
// ids f32 [3, N] → f32 [N, head_dim / 2].
Tensor mrope_angles(const Cosmos3Config& cfg, const Tensor& ids);

// The tables of rope_ (ops/rope.h: pair j at entries 2j, 2j + 1) for angles [N, head_dim / 2] →
// cos, sin f32 [N, head_dim] on `device`. The Q/K weights are permuted at load so that diffusers'
// rotate-half pair (j, j + head_dim / 2) sits at (2j, 2j + 1) (weights.h).
struct MropeTables {
  Tensor cos, sin;
};
MropeTables mrope_tables(const Tensor& angles, Device device);

}  // namespace vgen
