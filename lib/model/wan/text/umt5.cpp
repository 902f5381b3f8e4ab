#include "model/wan/text/umt5.h"

#include <filesystem>
#include <memory>

#include "core/log.h"
#include "dist/weight_stream.h"
#include "ops/device_ops.h"
#include "ops/elementwise.h"
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

Umt5Encoder Umt5Encoder::load(const std::string& dir, const Umt5Options& options) {
  fs::path cfg_path = fs::path(dir) / "config.json";
  VGEN_CHECK(fs::is_regular_file(cfg_path), ExitCode::kModel, "text encoder config {} not found", cfg_path.string());
  Umt5Config cfg = Umt5Config::from_json(read_json_file(cfg_path.string(), ExitCode::kModel), cfg_path.string());
  return Umt5Encoder(cfg, WeightStore::open(dir), options);
}

Umt5Encoder::Umt5Encoder(const Umt5Config& cfg, const WeightStore& ws, const Umt5Options& options,
                         WeightStream* stream, int component)
    : cfg_(cfg), opt_(options) {
  const bool on_device = opt_.device != Device::kCPU;
  const DType dt = opt_.dtype;
  if (on_device)
    VGEN_CHECK(dt == DType::kBF16 || dt == DType::kF32, ExitCode::kUsage,
               "text encoder on the device: compute dtype must be bf16 or f32, got {}", dtype_name(dt));
  else
    VGEN_CHECK(dt == DType::kF32, ExitCode::kUsage, "text encoder on the host: computes in f32, got {}",
               dtype_name(dt));
  std::unique_ptr<WeightStream> own;
  if (on_device && !stream) {
    own = std::make_unique<WeightStream>(nullptr, nullptr);
    stream = own.get();
    component = stream->add_component("text_encoder", ws);
  }
  // Host: F32 tensors stay zero-copy views of the mapped file, other float dtypes are converted
  // once. Device: a tensor in `dt` filled by the stream's run.
  auto get = [&](const std::string& name, const Shape& expect) {
    Tensor t;
    if (on_device) {
      t = Tensor::empty(expect, dt, opt_.device);
      stream->request(component, name, t, expect);
    } else {
      t = umt5_weight(ws, name, expect);
      if (t.dtype() != DType::kF32) t = t.to(DType::kF32);
    }
    weight_bytes_ += t.nbytes();
    return t;
  };
  const int64_t D = cfg.d_model, I = cfg.inner_dim(), F = cfg.d_ff, H = cfg.num_heads;
  // UMT5EncoderModel saves `shared.weight` (encoder.embed_tokens is the same tensor); accept either.
  std::string emb = ws.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  embed_ = get(emb, {cfg.vocab_size, D});
  layers_.resize(size_t(cfg.num_layers));
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    Umt5Layer& L = layers_[size_t(l)];
    std::string a = fmt::format("encoder.block.{}.layer.0.", l), f = fmt::format("encoder.block.{}.layer.1.", l);
    L.q.w = get(a + "SelfAttention.q.weight", {I, D});
    L.k.w = get(a + "SelfAttention.k.weight", {I, D});
    L.v.w = get(a + "SelfAttention.v.weight", {I, D});
    L.o.w = get(a + "SelfAttention.o.weight", {D, I});
    L.ln_attn = get(a + "layer_norm.weight", {D});
    // UMT5: every layer has its own bias; T5/MT5: only layer 0 has one, shared by all layers.
    std::string rb = a + "SelfAttention.relative_attention_bias.weight";
    if (l == 0 || (cfg.per_layer_bias() && ws.has(rb))) {
      L.rel_bias = get(rb, {cfg.num_buckets, H});
    } else if (cfg.per_layer_bias()) {
      log_warn_job("{}: '{}' is missing; layer {} reuses layer 0's relative attention bias", ws.source(), rb, l);
    }
    if (cfg.gated) {
      L.wi0.w = get(f + "DenseReluDense.wi_0.weight", {F, D});
      L.wi1.w = get(f + "DenseReluDense.wi_1.weight", {F, D});
    } else {
      L.wi0.w = get(f + "DenseReluDense.wi.weight", {F, D});
    }
    L.wo.w = get(f + "DenseReluDense.wo.weight", {D, F});
    L.ln_ffn = get(f + "layer_norm.weight", {D});
  }
  final_ln_ = get("encoder.final_layer_norm.weight", {D});
  if (own) own->run();
  if (on_device)
    log_debug("text encoder weights on the device: {:.1f} MiB ({})", double(weight_bytes_) / 1048576.0,
              dtype_name(dt));
}

namespace {

// One encoder block on h [Lq, D] in place; `table` [num_buckets, H] is the block's bias table.
void umt5_block(const Umt5Layer& L, const Tensor& table, const T5Positions& pos, const Umt5Config& cfg, Tensor& h) {
  const float eps = float(cfg.eps);
  const LinearMode plain;
  // Self-attention sublayer.
  Tensor n = t5_rms_norm(h, L.ln_attn, eps);  // [Lq, D]
  Tensor q = linear(L.q, n, plain);           // [Lq, I]
  Tensor k = linear(L.k, n, plain);           // [Lq, I]
  Tensor v = linear(L.v, n, plain);           // [Lq, I]
  Tensor bias = t5_relative_bias(table, pos);  // [H, Lq+Lk-1] f32
  Tensor att = t5_attention(q, k.narrow(0, pos.Lk), v.narrow(0, pos.Lk), bias, cfg.num_heads, pos.Lk);  // [Lq, I]
  add_inplace(h, linear(L.o, att, plain));  // h += att·Woᵀ  [Lq, D]
  // Feed-forward sublayer.
  n = t5_rms_norm(h, L.ln_ffn, eps);                                            // [Lq, D]
  Tensor g = linear(L.wi0, n, plain);                                           // [Lq, F]
  Tensor lin = L.wi1.w.defined() ? linear(L.wi1, n, plain) : Tensor();          // [Lq, F]
  Tensor act = t5_gated_act(g, lin, cfg.act);                                   // [Lq, F]
  add_inplace(h, linear(L.wo, act, plain));                                     // [Lq, D]
}

// Rows of every sequence, with the sequences and their token ids checked.
int64_t umt5_rows(const std::vector<Umt5Sequence>& seqs, int64_t vocab) {
  int64_t R = 0;
  for (auto& s : seqs) {
    VGEN_ASSERT(s.num_valid >= 1 && s.num_valid <= int64_t(s.ids.size()), "sequence with {} rows and {} valid",
                s.ids.size(), s.num_valid);
    // Checked on the host (the device gather never reads out of bounds either).
    for (int64_t id : s.ids)
      VGEN_CHECK(id >= 0 && id < vocab, ExitCode::kInput,
                 "token id {} is outside the text encoder's {}-row embedding", id, vocab);
    R += int64_t(s.ids.size());
  }
  return R;
}

}  // namespace

Tensor Umt5Encoder::forward_device(const std::vector<Umt5Sequence>& seqs) const {
  const int64_t R = umt5_rows(seqs, embed_.dim(0));
  VGEN_ASSERT(R >= 1, "text encoder forward without rows ({} sequences)", seqs.size());
  Tensor out = Tensor::empty({R, cfg_.d_model}, opt_.dtype, opt_.device);  // [R, D]
  // One sequence per pass: every GEMM a sequence goes through has its own row count, whatever is
  // encoded with it, so its result does not depend on its neighbours (a BLAS may round a row
  // differently with another M, and cuBLASLt may pick another algorithm).
  int64_t r0 = 0;
  for (auto& s : seqs) {
    const int64_t Lq = int64_t(s.ids.size());
    Tensor h = embedding(embed_, s.ids);  // [Lq, D], no scaling in T5
    // Relative position buckets (host float32 log, as transformers), shared by all layers.
    const T5Positions pos =
        t5_positions(Lq, s.num_valid, /*bidirectional=*/true, cfg_.num_buckets, cfg_.max_distance, opt_.device);
    for (const Umt5Layer& L : layers_)
      umt5_block(L, L.rel_bias.defined() ? L.rel_bias : layers_[0].rel_bias, pos, cfg_, h);  // [Lq, D]
    out.narrow(r0, Lq).copy_from(t5_rms_norm(h, final_ln_, float(cfg_.eps)));              // [Lq, D]
    r0 += Lq;
  }
  return out;
}

Tensor Umt5Encoder::forward(const std::vector<Umt5Sequence>& seqs) const {
  int64_t R = 0;
  for (auto& s : seqs) R += int64_t(s.ids.size());
  if (R == 0) return Tensor::empty({0, cfg_.d_model}, DType::kF32);
  Tensor out = forward_device(seqs);  // [R, D]
  return out.is_cpu() ? out : cast(out, DType::kF32).to(Device::kCPU);  // [R, D] host f32
}

}  // namespace vgen
