#include "model/size_limits.h"

#include "core/error.h"

namespace vgen {
namespace {

const char* kAxisKey[3] = {"num_frames", "height", "width"};

// Where a pixel or frame limit comes from, for messages.
std::string positions_text(const SizeLimits& l, int axis) {
  return fmt::format("the {} positions of the transformer's {} table{}", l.max_positions[size_t(axis)],
                     axis == 0 ? "temporal" : axis == 1 ? "height" : "width",
                     l.positions_source.empty() ? "" : " (" + l.positions_source + ")");
}

}  // namespace

int64_t SizeLimits::frame_positions(int64_t num_frames) const {
  return ((num_frames - 1) / scale_temporal + 1) / patch[0];
}

int64_t SizeLimits::max_num_frames() const {
  if (max_positions[0] <= 0) return 0;
  return (max_positions[0] * patch[0] - 1) * scale_temporal + 1;
}

int64_t SizeLimits::max_pixels(int axis) const {
  return max_positions[size_t(axis)] <= 0 ? 0 : max_positions[size_t(axis)] * pixels_per_position(axis);
}

std::string pixels_problem(int64_t pixels, int axis, const SizeLimits& l) {
  const int64_t step = l.pixels_per_position(axis);
  if (pixels % step != 0)
    return fmt::format("{} is not a multiple of {} (the VAE's spatial factor {} × the DiT's patch {})", pixels, step,
                       l.scale_spatial, l.patch[size_t(axis)]);
  const int64_t limit = l.max_positions[size_t(axis)];
  if (limit > 0 && pixels / step > limit)
    return fmt::format("{} pixels are {} positions ({} / {}), beyond {}: at most {}", pixels, pixels / step, pixels,
                       step, positions_text(l, axis), l.max_pixels(axis));
  return "";
}

std::string frames_problem(int64_t num_frames, const SizeLimits& l) {
  if (num_frames < 1 || (num_frames - 1) % l.scale_temporal != 0)
    return fmt::format("{} is not 1 + k·{} (the VAE's temporal factor)", num_frames, l.scale_temporal);
  const int64_t latent = (num_frames - 1) / l.scale_temporal + 1;
  if (latent % l.patch[0] != 0)
    return fmt::format("{} frames are {} latent frames, not a multiple of the DiT's temporal patch {}", num_frames,
                       latent, l.patch[0]);
  if (l.max_positions[0] > 0 && l.frame_positions(num_frames) > l.max_positions[0])
    return fmt::format("{} frames are {} latent frames (1 + (frames − 1) / {}, the VAE's temporal factor), beyond {}: "
                       "at most {} frames",
                       num_frames, latent, l.scale_temporal, positions_text(l, 0), l.max_num_frames());
  return "";
}

void check_generation_sizes(const Recipe& recipe, const SizeLimits& l) {
  const GenerationConfig& g = recipe.generation;
  const std::string where = recipe.source_path.empty() ? "recipe" : recipe.source_path;
  const std::string problems[3] = {frames_problem(g.num_frames, l), pixels_problem(g.height, 1, l),
                                   pixels_problem(g.width, 2, l)};
  for (int axis = 0; axis < 3; ++axis)
    VGEN_CHECK(problems[axis].empty(), ExitCode::kRecipe, "{}: generation.{}: {}", where, kAxisKey[axis],
               problems[axis]);
  VGEN_CHECK(l.max_text_tokens <= 0 || g.max_sequence_length <= l.max_text_tokens, ExitCode::kRecipe,
             "{}: generation.max_sequence_length: {} tokens are beyond the {} the text encoder takes{}: at most {}",
             where, g.max_sequence_length, l.max_text_tokens,
             l.text_source.empty() ? "" : " (" + l.text_source + ")", l.max_text_tokens);
}

}  // namespace vgen
