// Text encoder config (transformers UMT5Config / T5Config, `text_encoder/config.json`).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json.h"
#include "kernels/t5/gated_act_ref.h"

namespace vgen {

struct Umt5Config {
  // "umt5": a relative bias in every layer; "t5" / "mt5": layer 0's bias shared by all layers.
  std::string model_type = "umt5";
  int64_t d_model = 512;  // defaults: UMT5Config's (T5Config's where they differ, for model_type t5)
  int64_t d_kv = 64;
  int64_t num_heads = 6;
  int64_t d_ff = 1024;
  int64_t num_layers = 8;
  int64_t vocab_size = 250112;
  int num_buckets = 32;    // relative_attention_num_buckets
  int max_distance = 128;  // relative_attention_max_distance
  double eps = 1e-6;       // layer_norm_epsilon
  bool gated = true;       // feed_forward_proj "gated-*": wi_0 (activation) ⊙ wi_1
  kern::T5Act act = kern::T5Act::kGeluTanh;
  std::string act_name = "gelu_new";

  int64_t inner_dim() const { return num_heads * d_kv; }
  bool per_layer_bias() const { return model_type == "umt5"; }
  // Parameter count of the encoder (shared embedding, blocks, final norm).
  int64_t num_params() const;

  // Reads config.json; absent keys take the transformers constructor defaults. `where` names the
  // file in errors (kModel).
  static Umt5Config from_json(const Json& j, const std::string& where);
};

}  // namespace vgen
