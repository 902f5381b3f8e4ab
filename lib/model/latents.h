// Latent tensors of the pipeline: shape for a generation, the initial noise (a file or the seeded
// generator) and the VAE-side denormalisation `latents / (1/std) + mean` (wan_spec.md §4).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace vgen {

// [B, C, (F−1)/scale_temporal + 1, height/scale_spatial, width/scale_spatial].
Shape latent_shape(int64_t batch, int64_t channels, int num_frames, int height, int width, int scale_temporal,
                   int scale_spatial);

// Tensor `initial_latents` of the safetensors file at `path` (shape must equal `shape`), or, when
// `path` is empty, standard normal noise from `seed` (core/random.h). Host f32. Errors: kInput.
Tensor make_initial_latents(const Shape& shape, const std::string& path, uint64_t seed);

// Per latent channel, from the family's VAE config (no zero std: the family's parser refuses it).
struct LatentStats {
  std::vector<float> mean, std;
};
// latents [B, C, ...] → latents / (1/std) + mean per channel, in f32 as diffusers computes it.
Tensor denormalize_latents(const Tensor& latents, const LatentStats& stats);

}  // namespace vgen
