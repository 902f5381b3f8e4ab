// Latent tensors of the pipeline: shape for a generation, the initial noise (a file or the seeded
// generator) and the VAE-side denormalisation `latents / (1/std) + mean` (wan_spec.md §4).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/tensor.h"

namespace vgen {

// [B, C, (F−1)/scale_temporal + 1, height/scale_spatial, width/scale_spatial].
Shape latent_shape(int64_t batch, int64_t channels, int num_frames, int height, int width, int scale_temporal,
                   int scale_spatial);

// Tensor `initial_latents` of the safetensors file at `path` (shape must equal `shape`), or, when
// `path` is empty, standard normal noise from `seed` (core/random.h). Host f32. Errors: kInput.
Tensor make_initial_latents(const Shape& shape, const std::string& path, uint64_t seed);

struct LatentStats {
  std::vector<float> mean, std;  // per latent channel
};
// vae/config.json keys latents_mean, latents_std; absent → the Wan 2.1 values of wan_spec §5.1
// (16 channels). The sizes must equal `channels` (kModel naming `source`).
LatentStats read_latent_stats(const Json& vae_config, int64_t channels, const std::string& source);
// latents [B, C, ...] → latents / (1/std) + mean per channel, in f32 as diffusers computes it.
Tensor denormalize_latents(const Tensor& latents, const LatentStats& stats);

}  // namespace vgen
