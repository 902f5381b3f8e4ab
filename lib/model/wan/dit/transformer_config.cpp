#include "model/wan/dit/transformer_config.h"

#include <filesystem>

#include "io/diffusers_dir.h"

namespace vgen {
namespace {

template <typename T>
std::optional<T> opt_get(const Json& j, const std::string& key, const std::string& source) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  T v{};
  if (!json_as(j[key], &v))
    VGEN_THROW(ExitCode::kModel, "{}: config key '{}' has the wrong type or is out of range: {}", source, key,
               j[key].dump());
  return v;
}

template <typename T>
T get_or(const Json& j, const std::string& key, T dflt, const std::string& source) {
  auto v = opt_get<T>(j, key, source);
  return v ? *v : dflt;
}

}  // namespace

WanTransformerConfig WanTransformerConfig::from_json(const Json& j, const std::string& source) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: the transformer config must be a JSON object", source);
  WanTransformerConfig c;
  if (auto p = opt_get<std::vector<int>>(j, "patch_size", source)) {
    VGEN_CHECK(p->size() == 3, ExitCode::kModel, "{}: config key 'patch_size' must have 3 entries, got {}", source,
               j["patch_size"].dump());
    c.patch_size = {(*p)[0], (*p)[1], (*p)[2]};
  }
  c.num_attention_heads = get_or(j, "num_attention_heads", c.num_attention_heads, source);
  c.attention_head_dim = get_or(j, "attention_head_dim", c.attention_head_dim, source);
  c.in_channels = get_or(j, "in_channels", c.in_channels, source);
  // diffusers: out_channels = out_channels or in_channels.
  c.out_channels = get_or(j, "out_channels", c.in_channels, source);
  c.text_dim = get_or(j, "text_dim", c.text_dim, source);
  c.freq_dim = get_or(j, "freq_dim", c.freq_dim, source);
  c.ffn_dim = get_or(j, "ffn_dim", c.ffn_dim, source);
  c.num_layers = get_or(j, "num_layers", c.num_layers, source);
  c.cross_attn_norm = get_or(j, "cross_attn_norm", c.cross_attn_norm, source);
  c.qk_norm = get_or(j, "qk_norm", c.qk_norm, source);
  c.eps = get_or(j, "eps", c.eps, source);
  c.image_dim = opt_get<int>(j, "image_dim", source);
  c.added_kv_proj_dim = opt_get<int>(j, "added_kv_proj_dim", source);
  c.rope_max_seq_len = get_or(j, "rope_max_seq_len", c.rope_max_seq_len, source);
  c.pos_embed_seq_len = opt_get<int>(j, "pos_embed_seq_len", source);
  c.validate(source);
  return c;
}

WanTransformerConfig WanTransformerConfig::load(const std::string& component_dir) {
  std::string path = (std::filesystem::path(component_dir) / "config.json").string();
  return from_json(read_json_file(path, ExitCode::kModel), path);
}

void WanTransformerConfig::validate(const std::string& source) const {
  auto fail = [&](const std::string& key, const std::string& why) {
    VGEN_THROW(ExitCode::kModel, "{}: config key '{}': {}", source, key, why);
  };
  for (int i = 0; i < 3; ++i)
    if (patch_size[i] < 1) fail("patch_size", fmt::format("entries must be >= 1, got [{}, {}, {}]", patch_size[0],
                                                          patch_size[1], patch_size[2]));
  if (num_attention_heads < 1) fail("num_attention_heads", fmt::format("must be >= 1, got {}", num_attention_heads));
  if (attention_head_dim < 6 || attention_head_dim % 2)
    fail("attention_head_dim", fmt::format("must be even and >= 6 (RoPE splits it into t/h/w), got {}",
                                           attention_head_dim));
  // RoPE: h = w = 2·(Dh/6) rotate pairs; t = Dh − 2h must be a positive even count too.
  if (rope_h_dim() < 2 || rope_t_dim() < 2 || rope_t_dim() % 2)
    fail("attention_head_dim", fmt::format("RoPE split t/h/w = {}/{}/{} is not usable", rope_t_dim(), rope_h_dim(),
                                           rope_w_dim()));
  if (int64_t(num_attention_heads) * attention_head_dim > (int64_t(1) << 30))
    fail("num_attention_heads", "heads·head_dim is out of range");
  if (in_channels < 1) fail("in_channels", fmt::format("must be >= 1, got {}", in_channels));
  if (out_channels < 1) fail("out_channels", fmt::format("must be >= 1, got {}", out_channels));
  if (text_dim < 1) fail("text_dim", fmt::format("must be >= 1, got {}", text_dim));
  if (freq_dim < 2 || freq_dim % 2) fail("freq_dim", fmt::format("must be even and >= 2, got {}", freq_dim));
  if (ffn_dim < 1) fail("ffn_dim", fmt::format("must be >= 1, got {}", ffn_dim));
  if (num_layers < 0) fail("num_layers", fmt::format("must be >= 0, got {}", num_layers));
  if (qk_norm != "rms_norm_across_heads")
    fail("qk_norm", fmt::format("only \"rms_norm_across_heads\" is supported, got \"{}\"", qk_norm));
  if (!(eps > 0)) fail("eps", fmt::format("must be > 0, got {}", eps));
  if (rope_max_seq_len < 1) fail("rope_max_seq_len", fmt::format("must be >= 1, got {}", rope_max_seq_len));
  // The image path (Wan 2.1 I2V / FLF2V): image_dim sizes the CLIP tokens' embedder, whose output
  // (width D) the cross-attention's add_k_proj/add_v_proj read, so both keys come together.
  if (image_dim && *image_dim < 1) fail("image_dim", fmt::format("must be >= 1, got {}", *image_dim));
  if (image_dim.has_value() != added_kv_proj_dim.has_value())
    fail(image_dim ? "added_kv_proj_dim" : "image_dim",
         "image_dim and added_kv_proj_dim are set together (the image path) or not at all");
  if (added_kv_proj_dim && *added_kv_proj_dim != dim())
    fail("added_kv_proj_dim", fmt::format("must equal heads·head_dim = {} (it projects the image embedder's "
                                          "output), got {}", dim(), *added_kv_proj_dim));
  if (pos_embed_seq_len && !image_dim) fail("pos_embed_seq_len", "needs image_dim (FLF2V's image position embedding)");
  if (pos_embed_seq_len && (*pos_embed_seq_len < 2 || *pos_embed_seq_len % 2))
    fail("pos_embed_seq_len", fmt::format("must be even and >= 2 (two images' tokens), got {}", *pos_embed_seq_len));
}

}  // namespace vgen
