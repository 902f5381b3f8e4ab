#include "model/wan/vae/vae_config.h"

#include <filesystem>

#include "io/diffusers_dir.h"

namespace vgen {

namespace {
const std::vector<float> kWan21Mean = {-0.7571f, -0.7089f, -0.9113f, 0.1075f,  -0.1745f, 0.9653f,  -0.1517f, 1.5508f,
                                       0.4134f,  -0.0715f, 0.5517f,  -0.3632f, -0.1922f, -0.9497f, 0.2503f,  -0.2921f};
const std::vector<float> kWan21Std = {2.8184f, 1.4541f, 2.3275f, 2.6558f, 1.2196f, 1.7708f, 2.6052f, 2.0743f,
                                      3.2687f, 2.1526f, 2.8652f, 1.5579f, 1.6382f, 1.1253f, 2.8251f, 1.9160f};
}  // namespace

std::vector<int> WanVaeConfig::decoder_dims() const {
  std::vector<int> d;
  d.push_back(decoder_base_dim * dim_mult.back());
  for (auto it = dim_mult.rbegin(); it != dim_mult.rend(); ++it) d.push_back(decoder_base_dim * *it);
  return d;
}

int64_t WanVaeConfig::output_frames(int64_t latent_frames) const {
  int64_t f = latent_frames;
  for (int i = 0; i < num_up_blocks() - 1; ++i)
    if (temperal_upsample()[size_t(i)]) f = f > 0 ? 1 + 2 * (f - 1) : 0;
  return f;
}

int WanVaeConfig::spatial_upscale() const { return 1 << (num_up_blocks() - 1); }

int WanVaeConfig::up_block_in(int i) const {
  const std::vector<int> d = decoder_dims();
  return i > 0 && !is_residual ? d[size_t(i)] / 2 : d[size_t(i)];
}

int WanVaeConfig::upsampler_out(int i) const {
  const int out = decoder_dims()[size_t(i) + 1];
  return is_residual ? out : out / 2;
}

WanVaeConfig parse_wan_vae_config(const Json& j, const std::string& source) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: expected a JSON object", source);
  WanVaeConfig c;
  c.base_dim = json_get_or<int>(j, "base_dim", c.base_dim, source);
  c.decoder_base_dim = json_get_or<int>(j, "decoder_base_dim", c.base_dim, source);
  c.z_dim = json_get_or<int>(j, "z_dim", c.z_dim, source);
  c.dim_mult = json_get_or<std::vector<int>>(j, "dim_mult", c.dim_mult, source);
  c.num_res_blocks = json_get_or<int>(j, "num_res_blocks", c.num_res_blocks, source);
  c.attn_scales = json_get_or<std::vector<double>>(j, "attn_scales", c.attn_scales, source);
  c.temperal_downsample = json_get_or<std::vector<bool>>(j, "temperal_downsample", c.temperal_downsample, source);
  c.is_residual = json_get_or<bool>(j, "is_residual", c.is_residual, source);
  c.in_channels = json_get_or<int>(j, "in_channels", c.in_channels, source);
  c.out_channels = json_get_or<int>(j, "out_channels", c.out_channels, source);
  c.patch_size = json_get_or<int>(j, "patch_size", 0, source);
  c.scale_factor_temporal = json_get_or<int>(j, "scale_factor_temporal", c.scale_factor_temporal, source);
  c.scale_factor_spatial = json_get_or<int>(j, "scale_factor_spatial", c.scale_factor_spatial, source);
  c.latents_mean = json_get_or<std::vector<float>>(j, "latents_mean", kWan21Mean, source);
  c.latents_std = json_get_or<std::vector<float>>(j, "latents_std", kWan21Std, source);
  if (j.contains("dropout") && !j["dropout"].is_null()) {
    double dropout = json_get_or<double>(j, "dropout", 0.0, source);
    VGEN_CHECK(dropout >= 0 && dropout < 1, ExitCode::kModel, "{}: key 'dropout' = {} out of range", source, dropout);
  }

  VGEN_CHECK(c.base_dim > 0 && c.decoder_base_dim > 0, ExitCode::kModel, "{}: key 'base_dim' must be positive",
             source);
  VGEN_CHECK(c.z_dim > 0, ExitCode::kModel, "{}: key 'z_dim' must be positive", source);
  VGEN_CHECK(c.dim_mult.size() >= 2, ExitCode::kModel, "{}: key 'dim_mult' needs at least 2 entries", source);
  for (int m : c.dim_mult)
    VGEN_CHECK(m > 0, ExitCode::kModel, "{}: key 'dim_mult' entries must be positive", source);
  // Bounds far above the Wan VAEs (base_dim 96 or 160, dim_mult up to 4, 4 levels) that keep the
  // decoder widths, the 2^levels upscale and the channel products inside int.
  constexpr int kMaxWidth = 1 << 16;
  VGEN_CHECK(c.dim_mult.size() <= 16, ExitCode::kModel, "{}: key 'dim_mult' has {} entries (at most 16)", source,
             c.dim_mult.size());
  VGEN_CHECK(c.base_dim <= kMaxWidth && c.decoder_base_dim <= kMaxWidth && c.z_dim <= kMaxWidth &&
                 c.in_channels <= kMaxWidth && c.out_channels <= kMaxWidth && c.num_res_blocks <= 1024,
             ExitCode::kModel, "{}: VAE sizes out of range (base_dim {}, decoder_base_dim {}, z_dim {}, in_channels {}, "
             "out_channels {}, num_res_blocks {})",
             source, c.base_dim, c.decoder_base_dim, c.z_dim, c.in_channels, c.out_channels, c.num_res_blocks);
  for (int m : c.dim_mult)
    VGEN_CHECK(int64_t(m) * c.decoder_base_dim <= kMaxWidth && int64_t(m) * c.base_dim <= kMaxWidth,
               ExitCode::kModel, "{}: key 'dim_mult' entry {} makes a VAE width above {}", source, m, kMaxWidth);
  VGEN_CHECK(c.num_res_blocks >= 0, ExitCode::kModel, "{}: key 'num_res_blocks' must be >= 0", source);
  VGEN_CHECK(c.temperal_downsample.size() == c.dim_mult.size() - 1, ExitCode::kModel,
             "{}: key 'temperal_downsample' has {} entries, expected len(dim_mult) - 1 = {}", source,
             c.temperal_downsample.size(), c.dim_mult.size() - 1);
  VGEN_CHECK(c.out_channels > 0, ExitCode::kModel, "{}: key 'out_channels' must be positive", source);
  VGEN_CHECK(int(c.latents_mean.size()) == c.z_dim, ExitCode::kModel,
             "{}: key 'latents_mean' has {} entries, expected z_dim = {}", source, c.latents_mean.size(), c.z_dim);
  VGEN_CHECK(int(c.latents_std.size()) == c.z_dim, ExitCode::kModel,
             "{}: key 'latents_std' has {} entries, expected z_dim = {}", source, c.latents_std.size(), c.z_dim);
  for (float v : c.latents_std)
    VGEN_CHECK(v != 0.0f, ExitCode::kModel, "{}: key 'latents_std' has a zero entry", source);
  int temporal = 1;
  for (bool t : c.temperal_downsample) temporal *= t ? 2 : 1;
  VGEN_CHECK(c.patch_size >= 0 && c.patch_size <= 16, ExitCode::kModel, "{}: key 'patch_size' = {} out of range",
             source, c.patch_size);
  VGEN_CHECK(c.out_channels % (c.patch() * c.patch()) == 0, ExitCode::kModel,
             "{}: key 'out_channels' = {} is not a multiple of patch_size² = {} (the unpatchified video channels)",
             source, c.out_channels, c.patch() * c.patch());
  VGEN_CHECK(c.scale_factor_spatial == c.video_upscale(), ExitCode::kModel,
             "{}: key 'scale_factor_spatial' = {} but the VAE scales by {} (2^(len(dim_mult) - 1) · patch_size)",
             source, c.scale_factor_spatial, c.video_upscale());
  VGEN_CHECK(c.scale_factor_temporal == temporal, ExitCode::kModel,
             "{}: key 'scale_factor_temporal' = {} but temperal_downsample gives {}", source, c.scale_factor_temporal,
             temporal);
  // Wan 2.1 decoder: up block i>0 takes half the previous width (the upsampler outputs dim/2).
  auto dims = c.decoder_dims();
  for (size_t i = 1; i + 1 < dims.size() && !c.is_residual; ++i)
    VGEN_CHECK(dims[i] % 2 == 0, ExitCode::kModel,
               "{}: decoder width {} (decoder_base_dim · dim_mult) must be even for the Wan 2.1 upsamplers", source,
               dims[i]);
  // Wan 2.2 residual up block i (every one but the last): DupUp3D spreads its input's dims[i]
  // channels over dims[i+1] · factor_t · 2² output values, a whole number of copies each.
  for (int i = 0; c.is_residual && i + 1 < c.num_up_blocks(); ++i) {
    const int64_t factor = (c.temperal_upsample()[size_t(i)] ? 2 : 1) * 4;
    VGEN_CHECK(int64_t(dims[size_t(i) + 1]) * factor % dims[size_t(i)] == 0, ExitCode::kModel,
               "{}: up block {} (width {} → {}): its DupUp3D shortcut needs {} · {} to be a multiple of {}", source, i,
               dims[size_t(i)], dims[size_t(i) + 1], dims[size_t(i) + 1], factor, dims[size_t(i)]);
  }
  return c;
}

WanVaeConfig load_wan_vae_config(const std::string& vae_dir) {
  std::string path = (std::filesystem::path(vae_dir) / "config.json").string();
  return parse_wan_vae_config(read_json_file(path, ExitCode::kModel), path);
}

}  // namespace vgen
