#include "model/wan/plan_image.h"

#include <vector>

#include "io/safetensors.h"
#include "model/wan/family.h"

namespace vgen {

namespace {

struct EncoderShape {
  double in = 3, z = 16, base = 96, patch = 1;
  int res_blocks = 2;
  std::vector<int> mult = {1, 2, 4, 4};
  std::vector<bool> temporal_down = {false, true, true};
};

// The Wan VAE encoder (vae/vae_encoder.cpp, diffusers' WanEncoder3d) over F frames of H × W pixels:
// patchify, conv_in, per level num_res_blocks resnets (two 3×3×3 convs, a 1×1 shortcut where the
// width changes) and a stride-2 downsampler (3×3, and a stride-2 3×1×1 time conv where
// temperal_downsample), the mid block (two resnets, one attention per frame), conv_out, quant_conv.
double encoder_flops(const EncoderShape& e, double F, double H, double W) {
  double f = 0, frames = F, h = H / e.patch, w = W / e.patch;
  auto conv = [&](double cin, double cout, double taps, double px) { f += 2 * cin * cout * taps * px * frames; };
  std::vector<double> dims = {e.base};
  for (int m : e.mult) dims.push_back(e.base * m);
  conv(e.in, dims[0], 27, h * w);  // conv_in
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    for (int r = 0; r < e.res_blocks; ++r) {
      const double cin = r == 0 ? dims[i] : dims[i + 1];
      conv(cin, dims[i + 1], 27, h * w);
      conv(dims[i + 1], dims[i + 1], 27, h * w);
      if (cin != dims[i + 1]) conv(cin, dims[i + 1], 1, h * w);
    }
    if (i + 2 == dims.size()) break;  // no downsampler after the last level
    h /= 2, w /= 2;
    conv(dims[i + 1], dims[i + 1], 9, h * w);  // the stride-2 3×3 conv, at the output's pixels
    if (i < e.temporal_down.size() && e.temporal_down[i]) {
      frames = 1 + (frames - 1) / 2;
      conv(dims[i + 1], dims[i + 1], 3, h * w);  // the stride-2 time conv
    }
  }
  const double d = dims.back(), px = h * w;
  for (int r = 0; r < 4; ++r) conv(d, d, 27, px);         // the mid block's two resnets
  f += frames * (2 * d * 4 * d * px + 4 * px * px * d);  // its attention: q/k/v and out 1×1, scores and values
  conv(d, 2 * e.z, 27, px);                              // conv_out
  conv(2 * e.z, 2 * e.z, 1, px);                         // quant_conv
  return f;
}

// CLIP's penultimate hidden states for one image: the patch embedding and L − 1 encoder layers.
double clip_flops(const Json& c) {
  const double D = json_get_or<double>(c, "hidden_size", 1280), I = json_get_or<double>(c, "intermediate_size", 5120);
  const double layers = json_get_or<double>(c, "num_hidden_layers", 32) - 1;
  const double image = json_get_or<double>(c, "image_size", 224), patch = json_get_or<double>(c, "patch_size", 14);
  const double n = (image / patch) * (image / patch) + 1;
  return 2 * n * 3 * patch * patch * D + layers * (2 * n * (4 * D * D + 2 * D * I) + 4 * n * n * D);
}

void describe(const DiffusersDir& dir, PlanModel& m) {
  const ImageInputs in = WanFamily().image_inputs(dir);
  std::string frames = in.conditioning == ImageConditioning::kRequired ? "a first frame (required)"
                                                                       : "a first frame (optional)";
  if (in.last_image) frames += in.last_image_required ? " and a last frame (required)" : " and a last frame (optional)";
  if (!m.condition_frames_all) {  // TI2V: the first frame's latents are known
    m.conditioning = fmt::format("{}; the VAE encodes that frame alone; its latent frame's tokens run at timestep 0",
                                 frames);
    return;
  }
  m.conditioning = fmt::format("{}; the VAE encodes the whole condition video; {} extra input channels (mask + "
                               "condition)", frames, m.in_channels - m.out_channels);
}

}  // namespace

void plan_wan_vae_encoder(const DiffusersDir& dir, PlanModel& m) {
  const Json vc = dir.component_config("vae");
  EncoderShape e;
  e.base = json_get_or<double>(vc, "base_dim", 96);
  e.z = json_get_or<double>(vc, "z_dim", 16);
  e.in = json_get_or<double>(vc, "in_channels", 3);
  e.patch = vc.contains("patch_size") && vc["patch_size"].is_number() ? vc["patch_size"].get<double>() : 1;
  e.res_blocks = json_get_or(vc, "num_res_blocks", 2);
  if (vc.contains("dim_mult") && vc["dim_mult"].is_array() && !vc["dim_mult"].empty())
    e.mult = vc["dim_mult"].get<std::vector<int>>();
  if (vc.contains("temperal_downsample") && vc["temperal_downsample"].is_array())
    e.temporal_down = vc["temperal_downsample"].get<std::vector<bool>>();
  m.vae_encode_flops = [e](double F, double H, double W) { return encoder_flops(e, F, H, W); };
}

void plan_image_side(const DiffusersDir& dir, PlanModel& m, bool headers, size_t run_bytes) {
  if (WanFamily().image_inputs(dir).conditioning == ImageConditioning::kNone) return;
  m.condition_frames_all = m.in_channels != m.out_channels;  // I2V: the whole condition video; TI2V: one frame
  describe(dir, m);
  plan_wan_vae_encoder(dir, m);
  if (!wan_takes_image_tokens(dir)) return;
  const Json ic = dir.component_config("image_encoder");
  const int64_t image = json_get_or<int64_t>(ic, "image_size", 224), patch = json_get_or<int64_t>(ic, "patch_size", 14);
  const int64_t layers = json_get_or<int64_t>(ic, "num_hidden_layers", 32);
  m.conditioning += fmt::format("; {} CLIP image tokens per image ({} layers run of {}) beside the text",
                                patch > 0 ? (image / patch) * (image / patch) + 1 : 0, layers - 1, layers);
  m.image_encoder_flops = clip_flops(ic);
  const std::string idir = dir.component_path("image_encoder");
  if (headers && has_safetensors(idir)) m.image_encoder_bytes = WeightStore::open(idir).total_numel() * int64_t(run_bytes);
}

}  // namespace vgen
