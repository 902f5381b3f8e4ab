// Cosmos3OmniTransformer configuration (diffusers transformer_cosmos3.py), read from
// transformer/config.json. Absent or null keys take the diffusers constructor defaults; the
// variants (Qwen3 style: SwiGLU + RMSNorm; Edge/Nemotron style: relu² + Nemotron RMSNorm) come from
// the keys, never from a model name.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "core/json.h"

namespace vgen {

enum class Cosmos3Act : uint8_t { kSilu, kRelu2 };  // hidden_act: SwiGLU MLP | relu² non-gated MLP

struct Cosmos3Config {
  int hidden_size = 4096;
  int intermediate_size = 12288;
  int num_hidden_layers = 36;
  int num_attention_heads = 32;
  int num_key_value_heads = 8;
  int head_dim = 128;
  bool attention_bias = false;
  double rms_norm_eps = 1e-6;
  Cosmos3Act hidden_act = Cosmos3Act::kSilu;
  bool qk_norm_for_text = true;         // norm_q / norm_k on the understanding tower
  bool use_und_k_norm_for_gen = false;  // a separate K norm of the understanding keys the generation reads
  int vocab_size = 151936;
  // mRoPE: theta, the (t, h, w) frequency counts of the interleaved layout (sum = head_dim / 2).
  double rope_theta = 5000000.0;
  std::array<int, 3> rope_axes_dim = {24, 20, 20};
  int base_fps = 24;
  bool enable_fps_modulation = true;
  bool reset_spatial_ids = true;      // unified_3d_mrope_reset_spatial_ids
  int64_t temporal_margin = 15000;    // unified_3d_mrope_temporal_modality_margin
  // Latents: channels, the spatial patch and the patch vector's width (= channels·patch²).
  int latent_channel = 48;
  int latent_patch_size = 2;
  int patch_latent_dim = 192;
  double timestep_scale = 0.001;
  int timestep_channels = 256;  // Timesteps(num_channels=256) of the time embedder (fixed in diffusers)
  // Heads the checkpoint may carry and a video render never reads (their weights are skipped).
  bool sound_gen = false;
  bool action_gen = false;

  int q_dim() const { return num_attention_heads * head_dim; }
  int kv_dim() const { return num_key_value_heads * head_dim; }
  int kv_groups() const { return num_attention_heads / num_key_value_heads; }
  bool nemotron_norm() const { return hidden_act == Cosmos3Act::kRelu2; }
  // diffusers builds k_norm_und_for_gen only without the text Q/K norm (the flag is ignored otherwise).
  bool has_und_k_norm_for_gen() const { return use_und_k_norm_for_gen && !qk_norm_for_text; }

  // Parses and validates; `source` names the file in errors (kModel).
  static Cosmos3Config from_json(const Json& j, const std::string& source);
  // Reads <component_dir>/config.json.
  static Cosmos3Config load(const std::string& component_dir);
  // Throws kModel naming `source` and the offending key.
  void validate(const std::string& source) const;
};

}  // namespace vgen
