// CLIP vision tower config (transformers CLIPVisionConfig, the `image_encoder/config.json` of a
// CLIPVisionModel, e.g. the Wan 2.1 I2V checkpoints' ViT-H/14). Shared model code: any family may
// use it (docs/architecture.md, lib/model rooms).
#pragma once
#include <cstdint>
#include <string>

#include "core/json.h"

namespace vgen {

// The MLP activation (`hidden_act`): "gelu" is the exact erf GELU, "quick_gelu" x·sigmoid(1.702·x).
enum class ClipActivation { kGelu, kQuickGelu };

struct ClipVisionConfig {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_hidden_layers = 0;
  int64_t patch_size = 0;
  int64_t image_size = 0;
  int64_t num_channels = 0;
  double layer_norm_eps = 0;
  ClipActivation act = ClipActivation::kGelu;
  std::string act_name;  // as the config names it

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  int64_t grid() const { return image_size / patch_size; }  // patches per side
  int64_t num_patches() const { return grid() * grid(); }
  int64_t num_positions() const { return num_patches() + 1; }                     // + the class token
  int64_t patch_width() const { return num_channels * patch_size * patch_size; }  // a patch's values

  // Every key above is required (a saved CLIPVisionConfig has them all): a missing one, a wrong
  // type, an activation other than gelu / quick_gelu or inconsistent sizes are kModel naming
  // `where` (the file) and the key.
  static ClipVisionConfig from_json(const Json& j, const std::string& where);
  // <dir>/config.json.
  static ClipVisionConfig load(const std::string& dir);
};

}  // namespace vgen
