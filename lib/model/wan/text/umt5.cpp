#include "model/wan/text/umt5.h"

#include <cstring>
#include <filesystem>

#include "core/log.h"
#include "ops/linear.h"
#include "ops/t5_ops.h"

namespace vgen {
namespace fs = std::filesystem;

Tensor umt5_weight(const WeightStore& ws, const std::string& name, const Shape& expect) {
  VGEN_CHECK(ws.has(name), ExitCode::kModel, "{}: text encoder weight '{}' is missing", ws.source(), name);
  Tensor t = ws.get(name);
  VGEN_CHECK(t.shape() == expect, ExitCode::kModel, "{}: tensor '{}' has shape {}, expected {}", ws.source(), name,
             shape_str(t.shape()), shape_str(expect));
  VGEN_CHECK(t.dtype() == DType::kF32 || t.dtype() == DType::kBF16 || t.dtype() == DType::kF16, ExitCode::kModel,
             "{}: tensor '{}' has dtype {}, expected a float type", ws.source(), name, dtype_name(t.dtype()));
  return t;
}

namespace {

// F32 tensors stay zero-copy views of the mapped file; other float dtypes are converted once.
Tensor load_f32(const WeightStore& ws, const std::string& name, const Shape& expect) {
  Tensor t = umt5_weight(ws, name, expect);
  return t.dtype() == DType::kF32 ? t : t.to(DType::kF32);
}

}  // namespace

Umt5Encoder Umt5Encoder::load(const std::string& dir) {
  fs::path cfg_path = fs::path(dir) / "config.json";
  VGEN_CHECK(fs::is_regular_file(cfg_path), ExitCode::kModel, "text encoder config {} not found", cfg_path.string());
  Umt5Config cfg = Umt5Config::from_json(read_json_file(cfg_path.string(), ExitCode::kModel), cfg_path.string());
  return Umt5Encoder(cfg, WeightStore::open(dir));
}

Umt5Encoder::Umt5Encoder(const Umt5Config& cfg, const WeightStore& ws) : cfg_(cfg) {
  const int64_t D = cfg.d_model, I = cfg.inner_dim(), F = cfg.d_ff, H = cfg.num_heads;
  // UMT5EncoderModel saves `shared.weight` (encoder.embed_tokens is the same tensor); accept either.
  std::string emb = ws.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  embed_ = load_f32(ws, emb, {cfg.vocab_size, D});
  layers_.resize(size_t(cfg.num_layers));
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    Umt5Layer& L = layers_[size_t(l)];
    std::string a = fmt::format("encoder.block.{}.layer.0.", l), f = fmt::format("encoder.block.{}.layer.1.", l);
    L.q = load_f32(ws, a + "SelfAttention.q.weight", {I, D});
    L.k = load_f32(ws, a + "SelfAttention.k.weight", {I, D});
    L.v = load_f32(ws, a + "SelfAttention.v.weight", {I, D});
    L.o = load_f32(ws, a + "SelfAttention.o.weight", {D, I});
    L.ln_attn = load_f32(ws, a + "layer_norm.weight", {D});
    // UMT5: every layer has its own bias; T5/MT5: only layer 0 has one, shared by all layers.
    std::string rb = a + "SelfAttention.relative_attention_bias.weight";
    if (l == 0 || (cfg.per_layer_bias() && ws.has(rb))) {
      L.rel_bias = load_f32(ws, rb, {cfg.num_buckets, H});
    } else if (cfg.per_layer_bias()) {
      log_warn_job("{}: '{}' is missing; layer {} reuses layer 0's relative attention bias", ws.source(), rb, l);
    }
    if (cfg.gated) {
      L.wi0 = load_f32(ws, f + "DenseReluDense.wi_0.weight", {F, D});
      L.wi1 = load_f32(ws, f + "DenseReluDense.wi_1.weight", {F, D});
    } else {
      L.wi0 = load_f32(ws, f + "DenseReluDense.wi.weight", {F, D});
    }
    L.wo = load_f32(ws, f + "DenseReluDense.wo.weight", {D, F});
    L.ln_ffn = load_f32(ws, f + "layer_norm.weight", {D});
  }
  final_ln_ = load_f32(ws, "encoder.final_layer_norm.weight", {D});
}

Tensor Umt5Encoder::forward(const std::vector<Umt5Sequence>& seqs) const {
  const int64_t D = cfg_.d_model, H = cfg_.num_heads, V = embed_.dim(0);
  const float eps = float(cfg_.eps);
  int64_t R = 0;
  for (auto& s : seqs) {
    VGEN_ASSERT(s.num_valid >= 1 && s.num_valid <= int64_t(s.ids.size()), "sequence with {} rows and {} valid",
                s.ids.size(), s.num_valid);
    for (int64_t id : s.ids)
      VGEN_CHECK(id >= 0 && id < V, ExitCode::kInput, "token id {} is outside the text encoder's {}-row embedding",
                 id, V);
    R += int64_t(s.ids.size());
  }
  Tensor out = Tensor::empty({R, D}, DType::kF32);  // [R, D]
  // One sequence per pass: every GEMM a sequence goes through has its own row count, whatever is
  // encoded with it, so its result does not depend on its neighbours (a BLAS may round a row
  // differently with another M: other micro-kernels, blocking or threading).
  int64_t r0 = 0;
  for (auto& s : seqs) {
    const int64_t Lq = int64_t(s.ids.size()), Lk = s.num_valid;
    Tensor h = Tensor::empty({Lq, D}, DType::kF32);  // [Lq, D], embedding lookup (no scaling in T5)
    for (int64_t r = 0; r < Lq; ++r)
      std::memcpy(h.f32() + r * D, embed_.f32() + s.ids[size_t(r)] * D, size_t(D) * sizeof(float));
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Umt5Layer& L = layers_[l];
      const Tensor& table = L.rel_bias.defined() ? L.rel_bias : layers_[0].rel_bias;  // [nb, H]
      // Self-attention sublayer.
      Tensor n = t5_rms_norm(h, L.ln_attn, eps);  // [Lq, D]
      Tensor q = linear(n, L.q, Tensor());        // [Lq, I]
      Tensor k = linear(n, L.k, Tensor());        // [Lq, I]
      Tensor v = linear(n, L.v, Tensor());        // [Lq, I]
      Tensor bias = t5_relative_bias(table, Lq, Lk, /*bidirectional=*/true, cfg_.max_distance);  // [H, Lq+Lk-1]
      Tensor att = t5_attention(q, k.narrow(0, Lk), v.narrow(0, Lk), bias, H, Lk);            // [Lq, I]
      t5_residual_add(h, linear(att, L.o, Tensor()));  // h += att·Woᵀ  [Lq, D]
      // Feed-forward sublayer.
      n = t5_rms_norm(h, L.ln_ffn, eps);                                                    // [Lq, D]
      Tensor g = linear(n, L.wi0, Tensor());                                                // [Lq, F]
      Tensor act = t5_gated_act(g, L.wi1.defined() ? linear(n, L.wi1, Tensor()) : Tensor(), cfg_.act);  // [Lq, F]
      t5_residual_add(h, linear(act, L.wo, Tensor()));                                      // [Lq, D]
    }
    out.narrow(r0, Lq).copy_from(t5_rms_norm(h, final_ln_, eps));  // [Lq, D]
    r0 += Lq;
  }
  return out;
}

}  // namespace vgen
