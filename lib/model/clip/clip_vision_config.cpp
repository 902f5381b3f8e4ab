#include "model/clip/clip_vision_config.h"

#include <filesystem>

#include "io/diffusers_dir.h"

namespace vgen {

namespace {

template <typename T>
T required(const Json& j, const char* key, const std::string& where) {
  VGEN_CHECK(j.contains(key) && !j[key].is_null(), ExitCode::kModel,
             "{}: config key '{}' is missing (a CLIPVisionModel config names it)", where, key);
  return json_get_or<T>(j, key, T{}, where);
}

ClipActivation parse_activation(const std::string& name, const std::string& where) {
  if (name == "gelu") return ClipActivation::kGelu;
  if (name == "quick_gelu") return ClipActivation::kQuickGelu;
  VGEN_THROW(ExitCode::kModel, "{}: hidden_act '{}' is not supported (CLIP vision: gelu, quick_gelu)", where, name);
}

void check_sizes(const ClipVisionConfig& c, const std::string& where) {
  VGEN_CHECK(c.hidden_size > 0 && c.intermediate_size > 0 && c.num_attention_heads > 0 && c.num_hidden_layers > 0 &&
                 c.patch_size > 0 && c.image_size > 0 && c.num_channels > 0 && c.layer_norm_eps > 0,
             ExitCode::kModel,
             "{}: invalid CLIP vision sizes (hidden_size {}, intermediate_size {}, "
             "num_attention_heads {}, num_hidden_layers {}, patch_size {}, image_size {}, num_channels {}, "
             "layer_norm_eps {})",
             where, c.hidden_size, c.intermediate_size, c.num_attention_heads, c.num_hidden_layers, c.patch_size,
             c.image_size, c.num_channels, c.layer_norm_eps);
  // Far above ViT-H/14 (hidden 1280, MLP 5120, 32 layers, 224 px) and low enough that every
  // weight's and activation's element count fits in int64.
  VGEN_CHECK(c.hidden_size <= (1 << 16) && c.intermediate_size <= (1 << 18) && c.num_hidden_layers <= (1 << 10) &&
                 c.image_size <= (1 << 14) && c.patch_size <= c.image_size && c.num_channels <= 64,
             ExitCode::kModel,
             "{}: CLIP vision sizes out of range (hidden_size {}, intermediate_size {}, "
             "num_hidden_layers {}, image_size {}, patch_size {}, num_channels {})",
             where, c.hidden_size, c.intermediate_size, c.num_hidden_layers, c.image_size, c.patch_size,
             c.num_channels);
  VGEN_CHECK(c.hidden_size % c.num_attention_heads == 0, ExitCode::kModel,
             "{}: hidden_size {} is not a multiple of num_attention_heads {}", where, c.hidden_size,
             c.num_attention_heads);
  // The patch grid covers the image exactly (the processor crops to image_size; a remainder would
  // be dropped by the stride-patch conv, which vgen does not reproduce).
  VGEN_CHECK(c.image_size % c.patch_size == 0, ExitCode::kModel, "{}: image_size {} is not a multiple of patch_size {}",
             where, c.image_size, c.patch_size);
}

}  // namespace

ClipVisionConfig ClipVisionConfig::from_json(const Json& j, const std::string& where) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: the CLIP vision config must be a JSON object", where);
  const std::string type = json_get_or<std::string>(j, "model_type", "clip_vision_model", where);
  VGEN_CHECK(type == "clip_vision_model", ExitCode::kModel,
             "{}: model_type '{}' is not a CLIP vision tower (clip_vision_model)", where, type);
  ClipVisionConfig c;
  c.hidden_size = required<int64_t>(j, "hidden_size", where);
  c.intermediate_size = required<int64_t>(j, "intermediate_size", where);
  c.num_attention_heads = required<int64_t>(j, "num_attention_heads", where);
  c.num_hidden_layers = required<int64_t>(j, "num_hidden_layers", where);
  c.patch_size = required<int64_t>(j, "patch_size", where);
  c.image_size = required<int64_t>(j, "image_size", where);
  c.num_channels = required<int64_t>(j, "num_channels", where);
  c.layer_norm_eps = required<double>(j, "layer_norm_eps", where);
  c.act_name = required<std::string>(j, "hidden_act", where);
  c.act = parse_activation(c.act_name, where);
  check_sizes(c, where);
  return c;
}

ClipVisionConfig ClipVisionConfig::load(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  return from_json(read_json_file(path, ExitCode::kModel), path);
}

}  // namespace vgen
