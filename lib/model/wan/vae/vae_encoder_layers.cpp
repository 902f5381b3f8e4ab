// The encoder's layout (diffusers' WanEncoder3d checkpoint names) and the forwards of its down path
// over the device-dispatching ops; shapes in comments are the host's [C, t, H, W] (device: [t, H, W, C]).
#include "model/wan/vae/vae_encoder_layers.h"

#include <algorithm>

#include "ops/vae_down_ops.h"

namespace vgen {

namespace {

VaeDownsampler load_down(VaeWeightSource& src, const std::string& p, int64_t dim, bool temporal) {
  VaeDownsampler d;
  d.temporal = temporal;
  d.resample = src.conv(p + ".resample.1", dim, dim, 0, 3, 3);
  if (temporal) d.time_conv = src.conv(p + ".time_conv", dim, dim, 3, 1, 1);
  return d;
}

// Wan 2.1: down_blocks is one flat list of resnets, attention blocks and resamplers.
void build_plain_levels(const WanVaeConfig& cfg, VaeWeightSource& src, const std::vector<int64_t>& dims,
                        std::vector<VaeDownLevel>& levels) {
  const size_t n = cfg.dim_mult.size();
  int k = 0;  // index in the flat list
  double scale = 1.0;
  for (size_t i = 0; i < n; ++i) {
    VaeDownLevel& l = levels[i];
    int64_t in = dims[i];
    const int64_t out = dims[i + 1];
    const bool attn = std::find(cfg.attn_scales.begin(), cfg.attn_scales.end(), scale) != cfg.attn_scales.end();
    for (int r = 0; r < cfg.num_res_blocks; ++r) {
      l.res.push_back(load_vae_res_block(src, "encoder.down_blocks." + std::to_string(k++), in, out));
      l.has_attn.push_back(attn);
      l.attn.push_back(attn ? load_vae_attn_block(src, "encoder.down_blocks." + std::to_string(k++), out) : VaeAttnBlock{});
      in = out;
    }
    if (i + 1 != n) {
      l.has_down = true;
      l.down = load_down(src, "encoder.down_blocks." + std::to_string(k++), out, cfg.temperal_downsample[i]);
      scale /= 2.0;
    }
  }
}

// Wan 2.2: one WanResidualDownBlock per level, with the AvgDown3D shortcut.
void build_residual_levels(const WanVaeConfig& cfg, VaeWeightSource& src, const std::vector<int64_t>& dims,
                           std::vector<VaeDownLevel>& levels) {
  const size_t n = cfg.dim_mult.size();
  for (size_t i = 0; i < n; ++i) {
    VaeDownLevel& l = levels[i];
    const std::string p = "encoder.down_blocks." + std::to_string(i);
    int64_t in = dims[i];
    const int64_t out = dims[i + 1];
    for (int r = 0; r < cfg.num_res_blocks; ++r) {
      l.res.push_back(load_vae_res_block(src, p + ".resnets." + std::to_string(r), in, out));
      l.has_attn.push_back(false);
      l.attn.emplace_back();
      in = out;
    }
    const bool down = i + 1 != n, temporal = down && cfg.temperal_downsample[i];
    if (down) {
      l.has_down = true;
      l.down = load_down(src, p + ".downsampler", out, temporal);
    }
    l.avg_shortcut = true;
    l.factor_t = temporal ? 2 : 1;
    l.factor_s = down ? 2 : 1;
    VGEN_CHECK(dims[i] * l.factor_t * l.factor_s * l.factor_s % out == 0, ExitCode::kModel,
               "VAE encoder level {}: {} channels times the downsampling factor {} is not divisible by {}", i, dims[i],
               l.factor_t * l.factor_s * l.factor_s, out);
  }
}

}  // namespace

void build_vae_encoder_layers(const WanVaeConfig& cfg, VaeWeightSource& src, VaeEncoderLayers& L) {
  // Encoder widths: base_dim · [1, dim_mult...].
  std::vector<int64_t> dims = {cfg.base_dim};
  for (int m : cfg.dim_mult) dims.push_back(int64_t(cfg.base_dim) * m);
  const int64_t top = dims.back(), z2 = 2 * int64_t(cfg.z_dim);
  L.conv_in = src.conv("encoder.conv_in", dims[0], cfg.in_channels, 3, 3, 3);
  L.levels.assign(cfg.dim_mult.size(), {});
  if (cfg.is_residual)
    build_residual_levels(cfg, src, dims, L.levels);
  else
    build_plain_levels(cfg, src, dims, L.levels);
  L.mid0 = load_vae_res_block(src, "encoder.mid_block.resnets.0", top, top);
  L.attn = load_vae_attn_block(src, "encoder.mid_block.attentions.0", top);
  L.mid1 = load_vae_res_block(src, "encoder.mid_block.resnets.1", top, top);
  L.norm_out = src.gamma("encoder.norm_out.gamma", {top, 1, 1, 1});
  L.conv_out = src.conv("encoder.conv_out", z2, top, 3, 3, 3);
  L.quant_conv = src.conv("quant_conv", z2, z2, 1, 1, 1);
}

int64_t vae_encoder_spatial_factor(const WanVaeConfig& cfg) {
  return (int64_t(1) << (cfg.dim_mult.size() - 1)) * cfg.patch();
}

int64_t vae_encoder_latent_frames(const WanVaeConfig& cfg, int64_t frames) {
  return frames < 1 ? 0 : 1 + (frames - 1) / 4 * (4 / cfg.scale_factor_temporal);
}

Tensor vae_down_forward(const VaeDownsampler& d, const Tensor& x, VaeDownState& st, const VaeRun& run,
                        VaeEncoderContext& ctx) {
  // ZeroPad2d((0, 1, 0, 1)): one zero column on the right, one zero row at the bottom.
  Conv3dPad pad;
  const Tensor in = ctx.down_conv_input(x, pad);           // [C, t, H (+1), W (+1)]
  Tensor y = vae_strided_conv(d.resample, in, pad, 1, 2, run.conv);  // [C, t, H/2, W/2]
  if (!d.temporal) return y;
  const int64_t t = vae_dims(y).t;
  Tensor last = vae_frames(y, t - 1, 1).clone();  // [C, 1, H/2, W/2]
  if (!st.seen) {
    st.seen = true;
    st.last = last;
    return y;
  }
  Tensor buf = vae_cat_frames(st.last, y);  // [C, 1 + t, H/2, W/2]
  st.last = last;
  return vae_strided_conv(d.time_conv, buf, Conv3dPad{}, 2, 1, run.conv);  // [C, t/2, H/2, W/2]
}

Tensor vae_level_forward(const VaeDownLevel& l, const Tensor& x, VaeLevelState& st, const VaeRun& run,
                         VaeEncoderContext& ctx) {
  if (st.res.size() != l.res.size()) st.res.resize(l.res.size());
  Tensor h = x;  // [Cin, t, H, W]
  for (size_t r = 0; r < l.res.size(); ++r) {
    h = vae_res_forward(l.res[r], h, st.res[r], run, ctx);  // [Cout, t, H, W]
    if (l.has_attn[r]) h = vae_attn_forward(l.attn[r], h, ctx);
  }
  if (l.has_down) h = vae_down_forward(l.down, h, st.down, run, ctx);  // [Cout, t', H/2, W/2]
  if (l.avg_shortcut) vae_avg_down_add_(h, x, l.factor_t, l.factor_s);
  return h;
}

}  // namespace vgen
