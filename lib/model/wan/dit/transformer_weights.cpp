#include "model/wan/dit/transformer_weights.h"

#include <cstdint>
#include <set>

#include "core/log.h"

namespace vgen {
namespace {

// Reads the layout of `cfg` from a store; check_only: the headers alone (names, shapes, dtypes),
// every tensor left undefined and no byte of data touched.
class Loader {
 public:
  Loader(const WeightStore& store, WanTransformerWeights& out, bool check_only)
      : store_(store), out_(out), check_only_(check_only) {}

  // Tensor `name` with exactly `expect` as its file shape, as f32 viewed as `view` (if given).
  Tensor get(const std::string& name, const Shape& expect, const Shape& view = {}) {
    VGEN_CHECK(store_.has(name), ExitCode::kModel, "{}: missing tensor '{}' (expected shape {})", store_.source(),
               name, shape_str(expect));
    const TensorInfo& info = store_.file_of(name).infos().at(name);
    VGEN_CHECK(info.shape == expect, ExitCode::kModel, "{}: tensor '{}' has shape {}, the config implies {}",
               store_.source(), name, shape_str(info.shape), shape_str(expect));
    VGEN_CHECK(info.dtype == DType::kF32 || info.dtype == DType::kBF16 || info.dtype == DType::kF16, ExitCode::kModel,
               "{}: tensor '{}' has dtype {}, expected F32, BF16 or F16", store_.source(), name,
               dtype_name(info.dtype));
    used_.insert(name);
    if (check_only_) return Tensor();
    Tensor t = store_.get(name);
    if (t.dtype() != DType::kF32) {
      t = t.to(DType::kF32);  // converted once, owned
      out_.converted_bytes += t.nbytes();
    } else if (reinterpret_cast<uintptr_t>(t.raw()) % alignof(float)) {
      t = t.clone();  // a file with unaligned offsets: an owned copy instead of the mmap view
      out_.converted_bytes += t.nbytes();
    }
    out_.bytes += t.nbytes();
    return view.empty() ? t : t.reshape(view);
  }

  WanLinear linear(const std::string& prefix, int64_t out, int64_t in) {
    WanLinear l;
    l.w = get(prefix + ".weight", {out, in});
    l.b = get(prefix + ".bias", {out});
    return l;
  }

  WanAttentionWeights attention(const std::string& prefix, int64_t D) {
    WanAttentionWeights a;
    a.q = linear(prefix + ".to_q", D, D);
    a.k = linear(prefix + ".to_k", D, D);
    a.v = linear(prefix + ".to_v", D, D);
    a.o = linear(prefix + ".to_out.0", D, D);
    a.norm_q = get(prefix + ".norm_q.weight", {D});
    a.norm_k = get(prefix + ".norm_k.weight", {D});
    return a;
  }

  size_t unused() const {
    size_t n = 0;
    for (auto& name : store_.names())
      if (!used_.count(name)) ++n;
    return n;
  }

 private:
  const WeightStore& store_;
  WanTransformerWeights& out_;
  bool check_only_;
  std::set<std::string> used_;
};

// The layout of `cfg` read through `ld` (wan_spec.md §1.2).
void read_layout(Loader& ld, WanTransformerWeights& w, const WanTransformerConfig& cfg) {
  const int64_t D = cfg.dim(), Cin = cfg.in_channels, F = cfg.ffn_dim;
  const auto& p = cfg.patch_size;
  w.patch_embedding.w = ld.get("patch_embedding.weight", {D, Cin, p[0], p[1], p[2]}, {D, Cin * cfg.patch_volume()});
  w.patch_embedding.b = ld.get("patch_embedding.bias", {D});
  w.time_linear_1 = ld.linear("condition_embedder.time_embedder.linear_1", D, cfg.freq_dim);
  w.time_linear_2 = ld.linear("condition_embedder.time_embedder.linear_2", D, D);
  w.time_proj = ld.linear("condition_embedder.time_proj", 6 * D, D);
  w.text_linear_1 = ld.linear("condition_embedder.text_embedder.linear_1", D, cfg.text_dim);
  w.text_linear_2 = ld.linear("condition_embedder.text_embedder.linear_2", D, D);
  w.scale_shift_table = ld.get("scale_shift_table", {1, 2, D}, {2, D});
  w.proj_out = ld.linear("proj_out", int64_t(cfg.out_channels) * cfg.patch_volume(), D);
  w.blocks.resize(size_t(cfg.num_layers));
  for (int i = 0; i < cfg.num_layers; ++i) {
    const std::string b = fmt::format("blocks.{}", i);
    WanBlockWeights& bw = w.blocks[size_t(i)];
    bw.scale_shift_table = ld.get(b + ".scale_shift_table", {1, 6, D}, {6, D});
    bw.attn1 = ld.attention(b + ".attn1", D);
    bw.attn2 = ld.attention(b + ".attn2", D);
    if (cfg.cross_attn_norm) {
      bw.norm2_w = ld.get(b + ".norm2.weight", {D});
      bw.norm2_b = ld.get(b + ".norm2.bias", {D});
    }
    bw.ffn1 = ld.linear(b + ".ffn.net.0.proj", F, D);
    bw.ffn2 = ld.linear(b + ".ffn.net.2", D, F);
    if (cfg.has_image()) {
      bw.image.k = ld.linear(b + ".attn2.add_k_proj", D, D);
      bw.image.v = ld.linear(b + ".attn2.add_v_proj", D, D);
      bw.image.norm_k = ld.get(b + ".attn2.norm_added_k.weight", {D});
    }
  }
  if (cfg.has_image()) {
    const int64_t I = *cfg.image_dim;
    const std::string e = "condition_embedder.image_embedder";
    WanImageEmbedderWeights& ie = w.image_embedder;
    ie.norm1_w = ld.get(e + ".norm1.weight", {I});
    ie.norm1_b = ld.get(e + ".norm1.bias", {I});
    ie.ff1 = ld.linear(e + ".ff.net.0.proj", I, I);
    ie.ff2 = ld.linear(e + ".ff.net.2", D, I);
    ie.norm2_w = ld.get(e + ".norm2.weight", {D});
    ie.norm2_b = ld.get(e + ".norm2.bias", {D});
    if (cfg.pos_embed_seq_len)
      ie.pos_embed = ld.get(e + ".pos_embed", {1, *cfg.pos_embed_seq_len, I}, {*cfg.pos_embed_seq_len, I});
  }
}

}  // namespace

WanTransformerWeights load_wan_transformer_weights(const WeightStore& store, const WanTransformerConfig& cfg) {
  WanTransformerWeights w;
  Loader ld(store, w, false);
  read_layout(ld, w, cfg);
  if (size_t n = ld.unused())
    log_warn_job("{}: {} tensor(s) not used by the transformer", store.source(), n);
  return w;
}

void check_wan_transformer_weights(const WeightStore& store, const WanTransformerConfig& cfg) {
  WanTransformerWeights w;
  Loader ld(store, w, true);
  read_layout(ld, w, cfg);
}

uint8_t wan_fp8_linear_mask(const std::vector<std::string>& names) {
  uint8_t mask = 0;
  for (size_t j = 0; j < names.size(); ++j) {
    int found = -1;
    for (int i = 0; i < 8; ++i)
      if (names[j] == kWanFp8LinearNames[i]) found = i;
    if (found < 0) {
      std::string all;
      for (const char* n : kWanFp8LinearNames) all += (all.empty() ? "" : ", ") + std::string(n);
      VGEN_THROW(ExitCode::kRecipe, "fp8_config.bf16_linears[{}] is '{}', not a block linear; one of {}", j, names[j],
                 all);
    }
    mask = uint8_t(mask | (1u << found));
  }
  return mask;
}

}  // namespace vgen
