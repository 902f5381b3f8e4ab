// Model configuration files: the input is one JSON file, read as every component's config.json
// (transformer, VAE, UMT5 text encoder) and as model_index.json of a Diffusers folder. Rejected
// inputs end in kModel; an accepted config's derived sizes (model width, RoPE split, parameter
// count, decoder widths, frame counts) are in range.
#include "core/json.h"
#include "fuzz_common.h"
#include "io/diffusers_dir.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/text/umt5_config.h"
#include "model/wan/vae/vae_config.h"

using namespace vgen;

namespace {
std::filesystem::path g_root;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  g_root = fuzz::scratch_dir() / "pipeline";
  for (const char* c : {"transformer", "transformer_2", "text_encoder", "tokenizer", "vae", "scheduler"})
    std::filesystem::create_directories(g_root / c);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = g_root / "model_index.json";
  fuzz::write_file(path, data, size);
  for (const char* comp : {"transformer", "text_encoder", "vae"})
    fuzz::write_file(g_root / comp / "config.json", data, size);
  Json j;
  if (!fuzz::expect_documented({ExitCode::kModel}, [&] { j = read_json_file(path.string(), ExitCode::kModel); }))
    return 0;

  fuzz::expect_documented({ExitCode::kModel}, [&] {
    WanTransformerConfig c = WanTransformerConfig::from_json(j, "transformer/config.json");
    fuzz::check(c.dim() >= 1 && c.patch_volume() >= 1, "transformer width or patch out of range");
    fuzz::check(c.rope_t_dim() >= 2 && c.rope_h_dim() >= 2 && c.rope_t_dim() + 2 * c.rope_h_dim() ==
                    c.attention_head_dim, "RoPE split");
    WanTransformerConfig::load((g_root / "transformer").string());
  });
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    WanVaeConfig v = parse_wan_vae_config(j, "vae/config.json");
    for (int d : v.decoder_dims()) fuzz::check(d >= 1, "VAE decoder width out of range");
    fuzz::check(v.output_frames(21) >= 21 && v.spatial_upscale() >= 2, "VAE frame count or upscale out of range");
    fuzz::check(int64_t(v.latents_mean.size()) == v.z_dim && int64_t(v.latents_std.size()) == v.z_dim,
                "VAE latent statistics");
    load_wan_vae_config((g_root / "vae").string());
  });
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    Umt5Config u = Umt5Config::from_json(j, "text_encoder/config.json");
    fuzz::check(u.inner_dim() >= 1 && u.num_params() >= 1, "UMT5 sizes out of range");
  });
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    DiffusersDir d(g_root.string());
    for (const char* c : {"transformer", "transformer_2", "text_encoder", "tokenizer", "vae", "scheduler", ""})
      if (d.has_component(c)) {
        d.component_path(c);
        if (std::string(c) != "tokenizer" && std::string(c) != "scheduler") d.component_config(c);
      }
    json_get_or<double>(d.model_index(), "boundary_ratio", 0.0, "model_index.json");
  });
  return 0;
}
