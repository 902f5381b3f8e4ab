// The condition embedder's time output of one forward and the modulations it feeds (wan_spec.md
// §1.4.3–4): per sample (timestep [B]) or per token (timestep [B, S], Wan 2.2 TI2V's
// expand_timesteps: temb [B, S, D], timestep_proj [B, S, 6, D]). Per token, the embedding runs once
// per distinct timestep value of this rank's tokens (image-to-video: 0 and t) and `index` names
// each token's row: the same values per token as embedding every token, with tproj [U, 6D] instead
// of [B, S_loc, 6D]; a block's per-token modulation is expanded only while that block runs.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "parallel/seq_attention.h"

namespace vgen {

struct WanTimeEmbedding {
  Tensor temb;   // [N, D] compute dtype, time_embedder's output: N = B per sample, else U distinct values
  Tensor tproj;  // [N, 6D] f32, time_proj's output
  Tensor index;  // per token: [B·S_loc] i64 on temb's device, each local token's row; undefined: per sample
  bool per_token() const { return index.defined(); }
};

// This rank's tokens [layout.begin(), layout.end()) of timestep [B, S] (any device; f32, bf16 or
// i64): the distinct values [U] host f32 in order of first appearance and each token's row
// [B·S_loc] host i64. Padding tokens (>= S) take their sample's last token's value (their rows are
// dropped; a value already there adds no row).
struct WanTokenTimesteps {
  Tensor values, index;
};
WanTokenTimesteps wan_token_timesteps(const Tensor& timestep, const SeqLayout& layout);

// A block's modulation: scale_shift_table [1, 6, D] + tproj → [B, 6, D] f32, or [B, S_loc, 6, D]
// per token (mod rows shift1, scale1, gate1, shift2, scale2, gate2).
Tensor wan_block_modulation(const WanTimeEmbedding& t, const Tensor& table, int64_t B, int64_t S_loc);
// The head's shift and scale: scale_shift_table [1, 2, D] + float(temb) → [B, 2, D] f32, or
// [B, S_loc, 2, D] per token.
Tensor wan_head_modulation(const WanTimeEmbedding& t, const Tensor& table, int64_t B, int64_t S_loc);

}  // namespace vgen
