// LoRA key names → diffusers module names of the Wan DiT, and the shapes those modules have.
// The original Wan names map as diffusers' Wan conversion maps them: self_attn → attn1,
// cross_attn → attn2, q/k/v/o → to_q/to_k/to_v/to_out.0, ffn.0 → ffn.net.0.proj, ffn.2 → ffn.net.2,
// norm3 → norm2 (the cross-attention norm), modulation → scale_shift_table, text_embedding.0/2 →
// condition_embedder.text_embedder.linear_1/2, time_embedding.0/2 → ...time_embedder.linear_1/2,
// time_projection.1 → condition_embedder.time_proj, head.head → proj_out; the image path (I2V):
// cross_attn.k_img / v_img / norm_k_img → attn2.add_k_proj / add_v_proj / norm_added_k, img_emb.proj.1
// / proj.3 → condition_embedder.image_embedder.ff.net.0.proj / ff.net.2.
#include <array>
#include <cstdlib>

#include "model/wan/dit/lora.h"

namespace vgen {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Within a block, after "blocks.N.".
std::string wan_block_module(const std::string& m) {
  static const std::array<std::pair<const char*, const char*>, 2> kAttn = {{{"self_attn.", "attn1."},
                                                                           {"cross_attn.", "attn2."}}};
  for (auto& [from, to] : kAttn) {
    if (!starts_with(m, from)) continue;
    const std::string rest = m.substr(std::string(from).size());
    if (rest == "q") return std::string(to) + "to_q";
    if (rest == "k") return std::string(to) + "to_k";
    if (rest == "v") return std::string(to) + "to_v";
    if (rest == "o") return std::string(to) + "to_out.0";
    if (rest == "k_img") return std::string(to) + "add_k_proj";
    if (rest == "v_img") return std::string(to) + "add_v_proj";
    if (rest == "norm_k_img") return std::string(to) + "norm_added_k";
    return std::string(to) + rest;  // norm_q, norm_k (and names that match nothing)
  }
  if (m == "ffn.0") return "ffn.net.0.proj";
  if (m == "ffn.2") return "ffn.net.2";
  if (m == "norm3") return "norm2";  // Wan's norm3 is the cross-attention norm
  if (m == "norm2") return "norm3";  // Wan's norm2 is the FFN's (no weights)
  if (m == "modulation") return "scale_shift_table";
  return m;
}

std::string wan_module(const std::string& m) {
  if (starts_with(m, "blocks.")) {
    const size_t dot = m.find('.', 7);
    if (dot == std::string::npos) return m;
    return m.substr(0, dot + 1) + wan_block_module(m.substr(dot + 1));
  }
  static const std::array<std::pair<const char*, const char*>, 10> kTop = {{
      {"img_emb.proj.1", "condition_embedder.image_embedder.ff.net.0.proj"},
      {"img_emb.proj.3", "condition_embedder.image_embedder.ff.net.2"},
      {"text_embedding.0", "condition_embedder.text_embedder.linear_1"},
      {"text_embedding.2", "condition_embedder.text_embedder.linear_2"},
      {"time_embedding.0", "condition_embedder.time_embedder.linear_1"},
      {"time_embedding.2", "condition_embedder.time_embedder.linear_2"},
      {"time_projection.1", "condition_embedder.time_proj"},
      {"head.head", "proj_out"},
      {"head.modulation", "scale_shift_table"},
      {"patch_embedding", "patch_embedding"},
  }};
  for (auto& [from, to] : kTop)
    if (m == from) return to;
  return m;
}

// "blocks.N.<rest>" → N (or -1) and rest.
int block_index(const std::string& module, std::string* rest) {
  if (!starts_with(module, "blocks.")) return -1;
  const size_t dot = module.find('.', 7);
  if (dot == std::string::npos || dot == 7) return -1;
  int n = 0;
  for (size_t i = 7; i < dot; ++i) {
    if (module[i] < '0' || module[i] > '9' || n > 1000000) return -1;
    n = n * 10 + (module[i] - '0');
  }
  *rest = module.substr(dot + 1);
  return n;
}

}  // namespace

bool lora_file_uses_wan_names(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    if (starts_with(k, "diffusion_model.")) return true;
    for (const char* w : {".self_attn.", ".cross_attn.", ".lora_down.", ".lora_up.", "text_embedding.",
                          "time_embedding.", "time_projection.", "head.head.", "img_emb."})
      if (k.find(w) != std::string::npos) return true;
  }
  return false;
}

std::optional<LoraKey> parse_lora_key(const std::string& key, bool wan_names) {
  std::string m = key;
  for (const char* p : {"diffusion_model.", "transformer.", "base_model.model."})
    if (starts_with(m, p)) {
      m = m.substr(std::string(p).size());
      break;
    }
  static const std::array<std::pair<const char*, LoraPart>, 9> kSuffix = {{
      {".lora_A.weight", LoraPart::kDown},
      {".lora_down.weight", LoraPart::kDown},
      {".lora_B.weight", LoraPart::kUp},
      {".lora_up.weight", LoraPart::kUp},
      {".lora_B.bias", LoraPart::kUpBias},
      {".lora_up.bias", LoraPart::kUpBias},
      {".alpha", LoraPart::kAlpha},
      {".diff_b", LoraPart::kDiffBias},
      {".diff", LoraPart::kDiff},
  }};
  for (auto& [suffix, part] : kSuffix) {
    if (!ends_with(m, suffix)) continue;
    std::string module = m.substr(0, m.size() - std::string(suffix).size());
    if (module.empty()) return std::nullopt;
    return LoraKey{wan_names ? wan_module(module) : module, part};
  }
  return std::nullopt;
}

std::optional<LoraTargetShape> lora_target_shape(const WanTransformerConfig& cfg, const std::string& module) {
  const int64_t D = cfg.dim(), F = cfg.ffn_dim;
  auto linear = [](int64_t out, int64_t in) { return LoraTargetShape{{out, in}, {out}, true}; };
  std::string rest;
  const int n = block_index(module, &rest);
  if (n >= 0) {
    if (n >= cfg.num_layers) return std::nullopt;
    for (const char* a : {"attn1.", "attn2."}) {
      if (!starts_with(rest, a)) continue;
      const std::string r = rest.substr(6);
      if (r == "to_q" || r == "to_k" || r == "to_v" || r == "to_out.0") return linear(D, D);
      if (r == "norm_q" || r == "norm_k") return LoraTargetShape{{D}, {}, false};
      if (std::string(a) == "attn2." && cfg.has_image()) {  // the image path's keys and values
        if (r == "add_k_proj" || r == "add_v_proj") return linear(D, *cfg.added_kv_proj_dim);
        if (r == "norm_added_k") return LoraTargetShape{{D}, {}, false};
      }
      return std::nullopt;
    }
    if (rest == "ffn.net.0.proj") return linear(F, D);
    if (rest == "ffn.net.2") return linear(D, F);
    if (rest == "norm2" && cfg.cross_attn_norm) return LoraTargetShape{{D}, {D}, false};
    if (rest == "scale_shift_table") return LoraTargetShape{{1, 6, D}, {}, false};
    return std::nullopt;
  }
  if (module == "condition_embedder.time_embedder.linear_1") return linear(D, cfg.freq_dim);
  if (module == "condition_embedder.time_embedder.linear_2") return linear(D, D);
  if (module == "condition_embedder.time_proj") return linear(6 * D, D);
  if (module == "condition_embedder.text_embedder.linear_1") return linear(D, cfg.text_dim);
  if (module == "condition_embedder.text_embedder.linear_2") return linear(D, D);
  if (module == "proj_out") return linear(int64_t(cfg.out_channels) * cfg.patch_volume(), D);
  if (cfg.has_image() && module == "condition_embedder.image_embedder.ff.net.0.proj")
    return linear(*cfg.image_dim, *cfg.image_dim);
  if (cfg.has_image() && module == "condition_embedder.image_embedder.ff.net.2") return linear(D, *cfg.image_dim);
  if (module == "scale_shift_table") return LoraTargetShape{{1, 2, D}, {}, false};
  return std::nullopt;
}

Tensor* lora_weight_slot(WanTransformerWeights& w, const std::string& module, bool bias) {
  auto lin = [bias](WanLinear& l) { return bias ? &l.b : &l.w; };
  std::string rest;
  const int n = block_index(module, &rest);
  if (n >= 0) {
    if (n >= int(w.blocks.size())) return nullptr;
    WanBlockWeights& b = w.blocks[size_t(n)];
    for (WanAttentionWeights* a : {&b.attn1, &b.attn2}) {
      if (!starts_with(rest, a == &b.attn1 ? "attn1." : "attn2.")) continue;
      const std::string r = rest.substr(6);
      if (r == "to_q") return lin(a->q);
      if (r == "to_k") return lin(a->k);
      if (r == "to_v") return lin(a->v);
      if (r == "to_out.0") return lin(a->o);
      if (r == "norm_q") return bias ? nullptr : &a->norm_q;
      if (r == "norm_k") return bias ? nullptr : &a->norm_k;
      if (a == &b.attn2 && r == "add_k_proj" && b.image.k.w.defined()) return lin(b.image.k);
      if (a == &b.attn2 && r == "add_v_proj" && b.image.v.w.defined()) return lin(b.image.v);
      if (a == &b.attn2 && r == "norm_added_k" && b.image.norm_k.defined()) return bias ? nullptr : &b.image.norm_k;
      return nullptr;
    }
    if (rest == "ffn.net.0.proj") return lin(b.ffn1);
    if (rest == "ffn.net.2") return lin(b.ffn2);
    if (rest == "norm2") return bias ? &b.norm2_b : &b.norm2_w;
    if (rest == "scale_shift_table") return bias ? nullptr : &b.scale_shift_table;
    return nullptr;
  }
  if (module == "condition_embedder.time_embedder.linear_1") return lin(w.time_linear_1);
  if (module == "condition_embedder.time_embedder.linear_2") return lin(w.time_linear_2);
  if (module == "condition_embedder.time_proj") return lin(w.time_proj);
  if (module == "condition_embedder.text_embedder.linear_1") return lin(w.text_linear_1);
  if (module == "condition_embedder.text_embedder.linear_2") return lin(w.text_linear_2);
  if (module == "proj_out") return lin(w.proj_out);
  if (module == "condition_embedder.image_embedder.ff.net.0.proj" && w.image_embedder.ff1.w.defined())
    return lin(w.image_embedder.ff1);
  if (module == "condition_embedder.image_embedder.ff.net.2" && w.image_embedder.ff2.w.defined())
    return lin(w.image_embedder.ff2);
  if (module == "scale_shift_table") return bias ? nullptr : &w.scale_shift_table;
  return nullptr;
}

}  // namespace vgen
