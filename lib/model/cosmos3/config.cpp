#include "model/cosmos3/config.h"

#include <filesystem>
#include <vector>

#include "io/diffusers_dir.h"

namespace vgen {
namespace {

std::array<int, 3> axes_from(const Json& j, const std::string& key, const std::string& source) {
  auto v = json_get_or<std::vector<int>>(j, key, {}, source);
  VGEN_CHECK(v.size() == 3, ExitCode::kModel, "{}: config key '{}' must have 3 entries (t, h, w), got {}", source,
             key, j[key].dump());
  return {v[0], v[1], v[2]};
}

// rope_axes_dim, else rope_scaling.mrope_section, else diffusers' [24, 20, 20].
std::array<int, 3> rope_axes(const Json& j, std::array<int, 3> dflt, const std::string& source) {
  if (j.contains("rope_axes_dim") && !j["rope_axes_dim"].is_null()) return axes_from(j, "rope_axes_dim", source);
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
    const Json& rs = j["rope_scaling"];
    VGEN_CHECK(rs.is_object(), ExitCode::kModel, "{}: config key 'rope_scaling' must be an object, got {}", source,
               rs.dump());
    if (rs.contains("mrope_section") && !rs["mrope_section"].is_null())
      return axes_from(rs, "mrope_section", source + " (rope_scaling)");
  }
  return dflt;
}

Cosmos3Act parse_act(const std::string& s, const std::string& source) {
  if (s == "silu") return Cosmos3Act::kSilu;
  if (s == "relu2") return Cosmos3Act::kRelu2;
  VGEN_THROW(ExitCode::kModel, "{}: config key 'hidden_act': only \"silu\" and \"relu2\" are supported, got \"{}\"",
             source, s);
}

}  // namespace

Cosmos3Config Cosmos3Config::from_json(const Json& j, const std::string& source) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: the transformer config must be a JSON object", source);
  Cosmos3Config c;
  c.hidden_size = json_get_or(j, "hidden_size", c.hidden_size, source);
  c.intermediate_size = json_get_or(j, "intermediate_size", c.intermediate_size, source);
  c.num_hidden_layers = json_get_or(j, "num_hidden_layers", c.num_hidden_layers, source);
  c.num_attention_heads = json_get_or(j, "num_attention_heads", c.num_attention_heads, source);
  c.num_key_value_heads = json_get_or(j, "num_key_value_heads", c.num_key_value_heads, source);
  c.head_dim = json_get_or(j, "head_dim", c.head_dim, source);
  c.attention_bias = json_get_or(j, "attention_bias", c.attention_bias, source);
  c.rms_norm_eps = json_get_or(j, "rms_norm_eps", c.rms_norm_eps, source);
  c.hidden_act = parse_act(json_get_or<std::string>(j, "hidden_act", "silu", source), source);
  c.qk_norm_for_text = json_get_or(j, "qk_norm_for_text", c.qk_norm_for_text, source);
  c.use_und_k_norm_for_gen = json_get_or(j, "use_und_k_norm_for_gen", c.use_und_k_norm_for_gen, source);
  c.vocab_size = json_get_or(j, "vocab_size", c.vocab_size, source);
  c.rope_theta = json_get_or(j, "rope_theta", c.rope_theta, source);
  c.rope_axes_dim = rope_axes(j, c.rope_axes_dim, source);
  c.base_fps = json_get_or(j, "base_fps", c.base_fps, source);
  c.enable_fps_modulation = json_get_or(j, "enable_fps_modulation", c.enable_fps_modulation, source);
  c.reset_spatial_ids = json_get_or(j, "unified_3d_mrope_reset_spatial_ids", c.reset_spatial_ids, source);
  c.temporal_margin = json_get_or(j, "unified_3d_mrope_temporal_modality_margin", c.temporal_margin, source);
  c.latent_channel = json_get_or(j, "latent_channel", c.latent_channel, source);
  c.latent_patch_size = json_get_or(j, "latent_patch_size", c.latent_patch_size, source);
  c.patch_latent_dim = json_get_or(j, "patch_latent_dim", c.patch_latent_dim, source);
  c.timestep_scale = json_get_or(j, "timestep_scale", c.timestep_scale, source);
  c.sound_gen = json_get_or(j, "sound_gen", c.sound_gen, source);
  c.action_gen = json_get_or(j, "action_gen", c.action_gen, source);
  // attention_dropout is a training knob: any number is accepted and ignored, anything else refused.
  (void)json_get_or(j, "attention_dropout", 0.0, source);
  c.validate(source);
  return c;
}

Cosmos3Config Cosmos3Config::load(const std::string& component_dir) {
  std::string path = (std::filesystem::path(component_dir) / "config.json").string();
  return from_json(read_json_file(path, ExitCode::kModel), path);
}

void Cosmos3Config::validate(const std::string& source) const {
  auto fail = [&](const std::string& key, const std::string& why) {
    VGEN_THROW(ExitCode::kModel, "{}: config key '{}': {}", source, key, why);
  };
  auto positive = [&](const char* key, int64_t v) {
    if (v < 1) fail(key, fmt::format("must be >= 1, got {}", v));
  };
  positive("hidden_size", hidden_size);
  positive("intermediate_size", intermediate_size);
  positive("num_attention_heads", num_attention_heads);
  positive("num_key_value_heads", num_key_value_heads);
  positive("vocab_size", vocab_size);
  positive("latent_channel", latent_channel);
  positive("latent_patch_size", latent_patch_size);
  positive("base_fps", base_fps);
  if (num_hidden_layers < 0) fail("num_hidden_layers", fmt::format("must be >= 0, got {}", num_hidden_layers));
  if (head_dim < 2 || head_dim % 2) fail("head_dim", fmt::format("must be even and >= 2 (RoPE pairs), got {}", head_dim));
  if (num_attention_heads % num_key_value_heads)
    fail("num_key_value_heads", fmt::format("must divide num_attention_heads = {} (GQA groups), got {}",
                                            num_attention_heads, num_key_value_heads));
  if (int64_t(num_attention_heads) * head_dim > (int64_t(1) << 30)) fail("head_dim", "heads·head_dim is out of range");
  if (!(rms_norm_eps > 0)) fail("rms_norm_eps", fmt::format("must be > 0, got {}", rms_norm_eps));
  if (!(rope_theta > 1)) fail("rope_theta", fmt::format("must be > 1, got {}", rope_theta));
  // Interleaved mRoPE: h takes frequencies 1, 4, ... (< 3·h), w takes 2, 5, ... (< 3·w), t the rest.
  const int half = head_dim / 2;
  const auto& a = rope_axes_dim;
  if (a[0] < 1 || a[1] < 0 || a[2] < 0 || a[0] + a[1] + a[2] != half || 3 * a[1] > half || 3 * a[2] > half)
    fail("rope_axes_dim", fmt::format("[{}, {}, {}] must be non-negative with t >= 1, sum to head_dim / 2 = {} and "
                                      "3·h, 3·w <= {} (the interleaved layout)", a[0], a[1], a[2], half, half));
  if (temporal_margin < 0)
    fail("unified_3d_mrope_temporal_modality_margin", fmt::format("must be >= 0, got {}", temporal_margin));
  if (patch_latent_dim != latent_channel * latent_patch_size * latent_patch_size)
    fail("patch_latent_dim", fmt::format("must equal latent_channel·latent_patch_size² = {}, got {}",
                                         latent_channel * latent_patch_size * latent_patch_size, patch_latent_dim));
  if (!(timestep_scale > 0)) fail("timestep_scale", fmt::format("must be > 0, got {}", timestep_scale));
}

}  // namespace vgen
