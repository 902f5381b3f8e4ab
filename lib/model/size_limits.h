// The sizes a checkpoint can render, read from its configs (ModelFamily::size_limits) and checked
// before any work (docs/batch.md "Sizes"): frames and pixels against the VAE's factors, the DiT's
// patch and the positions its tables hold; the prompt length against the text side.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "io/recipe.h"

namespace vgen {

struct SizeLimits {
  int scale_spatial = 8, scale_temporal = 4;  // VAE: frames are 1 + k·scale_temporal
  std::array<int, 3> patch = {1, 2, 2};       // DiT patch (t, h, w) over the latent grid
  // Post-patch extents (t, h, w) the DiT's position tables hold (Wan: rope_max_seq_len rows per
  // axis); 0: no limit. positions_source names where the number comes from.
  std::array<int64_t, 3> max_positions = {0, 0, 0};
  std::string positions_source;
  // Tokens the text side takes (generation.max_sequence_length); 0: no limit known.
  int64_t max_text_tokens = 0;
  std::string text_source;

  // Pixels per post-patch position along height (axis 1) or width (axis 2).
  int64_t pixels_per_position(int axis) const { return int64_t(scale_spatial) * patch[size_t(axis)]; }
  // Post-patch extent of `num_frames` frames ((F − 1)/scale_temporal + 1 latent frames over patch t).
  int64_t frame_positions(int64_t num_frames) const;
  // The most frames / pixels along axis 1 or 2 the position tables hold; 0: no limit.
  int64_t max_num_frames() const;
  int64_t max_pixels(int axis) const;
};

// generation.num_frames, height, width and max_sequence_length of `recipe` against `limits`:
// kRecipe naming the key, its value, the limit and where the limit comes from.
void check_generation_sizes(const Recipe& recipe, const SizeLimits& limits);
// A frame count against `limits`: "" when it fits, else why (without a key: the caller names it).
std::string frames_problem(int64_t num_frames, const SizeLimits& limits);
// A frame height (axis 1) or width (axis 2) in pixels against `limits`: "" when it fits, else why.
std::string pixels_problem(int64_t pixels, int axis, const SizeLimits& limits);

}  // namespace vgen
