#include "model/wan/text/umt5_config.h"

#include "io/diffusers_dir.h"

namespace vgen {

int64_t Umt5Config::num_params() const {
  int64_t D = d_model, I = inner_dim();
  int64_t attn = 4 * D * I + 2 * D;  // q, k, v, o + the two layer norms
  int64_t ffn = (gated ? 3 : 2) * D * d_ff;
  int64_t bias = int64_t(num_buckets) * num_heads;
  int64_t n_bias_layers = per_layer_bias() ? num_layers : (num_layers > 0 ? 1 : 0);
  return vocab_size * D + num_layers * (attn + ffn) + n_bias_layers * bias + D;
}

Umt5Config Umt5Config::from_json(const Json& j, const std::string& where) {
  VGEN_CHECK(j.is_object(), ExitCode::kModel, "{}: the text encoder config must be a JSON object", where);
  Umt5Config c;
  try {
    c.model_type = json_get_or<std::string>(j, "model_type", c.model_type);
    std::string ffp_default = "gated-gelu";
    if (c.model_type == "t5") {  // T5Config constructor defaults (UMT5Config/MT5Config: the struct's)
      c.vocab_size = 32128, c.d_ff = 2048, c.num_layers = 6, c.num_heads = 8;
      ffp_default = "relu";
    }
    c.d_model = json_get_or<int64_t>(j, "d_model", c.d_model);
    c.d_kv = json_get_or<int64_t>(j, "d_kv", c.d_kv);
    c.num_heads = json_get_or<int64_t>(j, "num_heads", c.num_heads);
    c.d_ff = json_get_or<int64_t>(j, "d_ff", c.d_ff);
    c.num_layers = json_get_or<int64_t>(j, "num_layers", c.num_layers);
    c.vocab_size = json_get_or<int64_t>(j, "vocab_size", c.vocab_size);
    c.num_buckets = json_get_or<int>(j, "relative_attention_num_buckets", c.num_buckets);
    c.max_distance = json_get_or<int>(j, "relative_attention_max_distance", c.max_distance);
    c.eps = json_get_or<double>(j, "layer_norm_epsilon", c.eps);
    std::string ffp = json_get_or<std::string>(j, "feed_forward_proj", ffp_default);
    // As transformers: "[gated-]<act>", and "gated-gelu" means gelu_new; a saved dense_act_fn /
    // is_gated_act (set by the config class from feed_forward_proj) wins.
    size_t dash = ffp.rfind('-');
    std::string act = dash == std::string::npos ? ffp : ffp.substr(dash + 1);
    c.gated = ffp.rfind("gated-", 0) == 0;
    VGEN_CHECK(dash == std::string::npos || c.gated, ExitCode::kModel,
               "{}: feed_forward_proj '{}' is not '<act>' or 'gated-<act>'", where, ffp);
    if (ffp == "gated-gelu") act = "gelu_new";
    c.act_name = json_get_or<std::string>(j, "dense_act_fn", act);
    c.gated = json_get_or<bool>(j, "is_gated_act", c.gated);
  } catch (const Error& e) {
    VGEN_THROW(ExitCode::kModel, "{}: {}", where, e.message());
  }
  const std::string& a = c.act_name;
  if (a == "relu") c.act = kern::T5Act::kRelu;
  else if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") c.act = kern::T5Act::kGeluTanh;
  else if (a == "gelu") c.act = kern::T5Act::kGeluErf;
  else if (a == "silu" || a == "swish") c.act = kern::T5Act::kSilu;
  else VGEN_THROW(ExitCode::kModel, "{}: unsupported feed-forward activation '{}'", where, a);
  VGEN_CHECK(c.model_type == "umt5" || c.model_type == "t5" || c.model_type == "mt5", ExitCode::kModel,
             "{}: model_type '{}' is not a T5 encoder (umt5, t5, mt5)", where, c.model_type);
  VGEN_CHECK(c.d_model > 0 && c.d_kv > 0 && c.num_heads > 0 && c.d_ff > 0 && c.num_layers >= 0 && c.vocab_size > 0 &&
                 c.num_buckets >= 2 && c.max_distance > 0 && c.eps > 0,
             ExitCode::kModel, "{}: invalid text encoder sizes (d_model {}, d_kv {}, num_heads {}, d_ff {}, "
             "num_layers {}, vocab_size {}, buckets {}, max_distance {})",
             where, c.d_model, c.d_kv, c.num_heads, c.d_ff, c.num_layers, c.vocab_size, c.num_buckets,
             c.max_distance);
  // Far above UMT5-XXL (d_model 4096, inner 4096, d_ff 10240, 24 layers, 256,384 ids), and low
  // enough that the parameter count and every weight's element count fit in int64.
  VGEN_CHECK(c.d_model <= (1 << 20) && c.d_kv <= (1 << 20) && c.num_heads <= (1 << 20) &&
                 c.inner_dim() <= (1 << 20) && c.d_ff <= (1 << 22) && c.num_layers <= (1 << 12) &&
                 c.vocab_size <= (1 << 26) && c.num_buckets <= (1 << 16),
             ExitCode::kModel, "{}: text encoder sizes out of range (d_model {}, d_kv {}, num_heads {}, d_ff {}, "
             "num_layers {}, vocab_size {}, buckets {})",
             where, c.d_model, c.d_kv, c.num_heads, c.d_ff, c.num_layers, c.vocab_size, c.num_buckets);
  return c;
}

}  // namespace vgen
