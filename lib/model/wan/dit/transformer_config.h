// WanTransformer3DModel configuration (wan_spec.md §1.1), read from transformer/config.json.
// Absent or null keys take the diffusers constructor defaults.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/json.h"

namespace vgen {

struct WanTransformerConfig {
  std::array<int, 3> patch_size = {1, 2, 2};  // (pt, ph, pw)
  int num_attention_heads = 40;
  int attention_head_dim = 128;
  int in_channels = 16;
  int out_channels = 16;
  int text_dim = 4096;
  int freq_dim = 256;
  int ffn_dim = 13824;
  int num_layers = 40;
  bool cross_attn_norm = true;
  std::string qk_norm = "rms_norm_across_heads";
  double eps = 1e-6;
  std::optional<int> image_dim;          // the image path (I2V): the CLIP tokens' width
  std::optional<int> added_kv_proj_dim;  // with image_dim: the image K/V projections' input (= D)
  int rope_max_seq_len = 1024;
  std::optional<int> pos_embed_seq_len;  // FLF2V: the two images' token positions

  int dim() const { return num_attention_heads * attention_head_dim; }  // D
  bool has_image() const { return image_dim.has_value(); }
  int patch_volume() const { return patch_size[0] * patch_size[1] * patch_size[2]; }
  // RoPE split of the head dim: h = w = 2·(Dh/6), t = Dh − h − w (44/42/42 for Dh = 128).
  int rope_h_dim() const { return 2 * (attention_head_dim / 6); }
  int rope_w_dim() const { return rope_h_dim(); }
  int rope_t_dim() const { return attention_head_dim - rope_h_dim() - rope_w_dim(); }
  // Rows of each axis' RoPE table: the post-patch grid may be at most this long along t, h and w
  // (ModelFamily::size_limits checks a recipe against it before any work).
  int64_t rope_positions() const { return rope_max_seq_len; }

  // Parses and validates; `source` names the file in errors (kModel).
  static WanTransformerConfig from_json(const Json& j, const std::string& source);
  // Reads <component_dir>/config.json.
  static WanTransformerConfig load(const std::string& component_dir);
  // Throws kModel naming `source` and the offending key.
  void validate(const std::string& source) const;
};

}  // namespace vgen
