// AutoencoderKLWan configuration (vae/config.json; wan_spec §5.1). Absent or null keys take the
// diffusers constructor defaults.
#pragma once
#include <string>
#include <vector>

#include "core/json.h"

namespace vgen {

struct WanVaeConfig {
  int base_dim = 96;
  int decoder_base_dim = 96;  // null in the file → base_dim
  int z_dim = 16;
  std::vector<int> dim_mult = {1, 2, 4, 4};
  int num_res_blocks = 2;
  std::vector<double> attn_scales;  // only the encoder uses it; the decoder has no up-block attention
  std::vector<bool> temperal_downsample = {false, true, true};
  bool is_residual = false;  // Wan 2.2 (TI2V-5B) VAE
  int in_channels = 3;
  int out_channels = 3;
  int patch_size = 0;  // null → 0 (no patchify); Wan 2.2: 2 (the decoder's out_channels unpatchified)
  int scale_factor_temporal = 4;
  int scale_factor_spatial = 8;
  std::vector<float> latents_mean;  // z_dim entries (defaults: the Wan 2.1 statistics)
  std::vector<float> latents_std;

  // temperal_downsample reversed: which up blocks upsample in time.
  std::vector<bool> temperal_upsample() const { return {temperal_downsample.rbegin(), temperal_downsample.rend()}; }
  // Decoder channel widths dims[0..n]: decoder_base_dim · [dim_mult[-1]] + reversed(dim_mult).
  std::vector<int> decoder_dims() const;
  int num_up_blocks() const { return int(dim_mult.size()); }
  // Output frames for T latent frames: 1 + 4·(T−1) with two temporal upsamplers.
  int64_t output_frames(int64_t latent_frames) const;
  int spatial_upscale() const;  // 2^(number of up blocks that upsample) (8 for Wan 2.1 and 2.2)
  // The unpatchify after the decoder: patch p (1: none), the video's channels out_channels / p²
  // and its size over the latents', spatial_upscale · p (16 for Wan 2.2).
  int patch() const { return patch_size > 1 ? patch_size : 1; }
  int video_channels() const { return out_channels / (patch() * patch()); }
  int video_upscale() const { return spatial_upscale() * patch(); }
  // Up block i's input width and its upsampler's output width: Wan 2.1 halves the width in each
  // upsampler, the Wan 2.2 residual blocks keep it (diffusers' upsample_out_dim).
  int up_block_in(int i) const;
  int upsampler_out(int i) const;
};

// Parses a config.json object; `source` names the file in errors. Throws kModel naming the key for
// wrong types and inconsistent sizes.
WanVaeConfig parse_wan_vae_config(const Json& j, const std::string& source);
// Reads <vae_dir>/config.json.
WanVaeConfig load_wan_vae_config(const std::string& vae_dir);

}  // namespace vgen
