// UMT5 / T5 encoder on the GPU (umt5_device.h); CUDA builds only. Mirrors Umt5Encoder (umt5.cpp)
// op for op, with the device ops of ops/t5_device_ops.h, ops/dit_device_ops.h (residual add) and
// cuda_linear (cuBLASLt GEMMs).
#include <filesystem>

#include "core/log.h"
#include "dist/weight_stream.h"
#include "model/wan/text/umt5_device.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "ops/t5_device_ops.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// A checkpoint tensor (any float dtype) as a device tensor in `dt`, filled by the stream's run.
Tensor fetch(WeightStream& st, int comp, const std::string& name, const Shape& expect, DType dt, size_t* bytes) {
  Tensor d = Tensor::empty(expect, dt, Device::kCUDA);
  st.request(comp, name, d, expect);
  *bytes += d.nbytes();
  return d;
}

}  // namespace

std::unique_ptr<Umt5DeviceEncoder> Umt5DeviceEncoder::load(const std::string& dir, const Umt5DeviceOptions& options) {
  fs::path cfg_path = fs::path(dir) / "config.json";
  VGEN_CHECK(fs::is_regular_file(cfg_path), ExitCode::kModel, "text encoder config {} not found", cfg_path.string());
  Umt5Config cfg = Umt5Config::from_json(read_json_file(cfg_path.string(), ExitCode::kModel), cfg_path.string());
  return std::make_unique<Umt5DeviceEncoder>(cfg, WeightStore::open(dir), options);
}

Umt5DeviceEncoder::Umt5DeviceEncoder(const Umt5Config& cfg, const WeightStore& ws, const Umt5DeviceOptions& options,
                                     WeightStream* stream, int component)
    : cfg_(cfg), opt_(options) {
  std::unique_ptr<WeightStream> own;
  if (!stream) {
    own = std::make_unique<WeightStream>(nullptr, nullptr);
    stream = own.get();
    component = stream->add_component("text_encoder", ws);
  }
  auto upload = [&](const WeightStore&, const std::string& name, const Shape& expect, DType dt, size_t* bytes) {
    return fetch(*stream, component, name, expect, dt, bytes);
  };
  VGEN_CHECK(opt_.dtype == DType::kBF16 || opt_.dtype == DType::kF32, ExitCode::kUsage,
             "text encoder on the device: compute dtype must be bf16 or f32, got {}", dtype_name(opt_.dtype));
  const int64_t D = cfg.d_model, I = cfg.inner_dim(), F = cfg.d_ff, H = cfg.num_heads;
  const DType dt = opt_.dtype;
  size_t* nb = &weight_bytes_;
  // UMT5EncoderModel saves `shared.weight` (encoder.embed_tokens is the same tensor); accept either.
  std::string emb = ws.has("shared.weight") ? "shared.weight" : "encoder.embed_tokens.weight";
  embed_ = upload(ws, emb, {cfg.vocab_size, D}, dt, nb);
  layers_.resize(size_t(cfg.num_layers));
  for (int64_t l = 0; l < cfg.num_layers; ++l) {
    Umt5Layer& L = layers_[size_t(l)];
    std::string a = fmt::format("encoder.block.{}.layer.0.", l), f = fmt::format("encoder.block.{}.layer.1.", l);
    L.q = upload(ws, a + "SelfAttention.q.weight", {I, D}, dt, nb);
    L.k = upload(ws, a + "SelfAttention.k.weight", {I, D}, dt, nb);
    L.v = upload(ws, a + "SelfAttention.v.weight", {I, D}, dt, nb);
    L.o = upload(ws, a + "SelfAttention.o.weight", {D, I}, dt, nb);
    L.ln_attn = upload(ws, a + "layer_norm.weight", {D}, dt, nb);
    // UMT5: every layer has its own bias; T5/MT5: only layer 0 has one, shared by all layers.
    std::string rb = a + "SelfAttention.relative_attention_bias.weight";
    if (l == 0 || (cfg.per_layer_bias() && ws.has(rb))) {
      L.rel_bias = upload(ws, rb, {cfg.num_buckets, H}, dt, nb);
    } else if (cfg.per_layer_bias()) {
      log_warn_job("{}: '{}' is missing; layer {} reuses layer 0's relative attention bias", ws.source(), rb, l);
    }
    if (cfg.gated) {
      L.wi0 = upload(ws, f + "DenseReluDense.wi_0.weight", {F, D}, dt, nb);
      L.wi1 = upload(ws, f + "DenseReluDense.wi_1.weight", {F, D}, dt, nb);
    } else {
      L.wi0 = upload(ws, f + "DenseReluDense.wi.weight", {F, D}, dt, nb);
    }
    L.wo = upload(ws, f + "DenseReluDense.wo.weight", {D, F}, dt, nb);
    L.ln_ffn = upload(ws, f + "layer_norm.weight", {D}, dt, nb);
  }
  final_ln_ = upload(ws, "encoder.final_layer_norm.weight", {D}, dt, nb);
  if (own) own->run();
  log_debug("text encoder weights on the device: {:.1f} MiB ({})", double(weight_bytes_) / 1048576.0,
            dtype_name(dt));
}

Tensor Umt5DeviceEncoder::forward_device(const std::vector<Umt5Sequence>& seqs) const {
  const int64_t H = cfg_.num_heads, I = cfg_.inner_dim(), D = cfg_.d_model, V = embed_.dim(0);
  const float eps = float(cfg_.eps);
  const DType dt = opt_.dtype;
  int64_t R = 0;
  for (auto& s : seqs) {
    VGEN_ASSERT(s.num_valid >= 1 && s.num_valid <= int64_t(s.ids.size()), "sequence with {} rows and {} valid",
                s.ids.size(), s.num_valid);
    // Token ids, checked on the host (the device gather never reads out of bounds either).
    for (int64_t id : s.ids)
      VGEN_CHECK(id >= 0 && id < V, ExitCode::kInput, "token id {} is outside the text encoder's {}-row embedding",
                 id, V);
    R += int64_t(s.ids.size());
  }
  VGEN_ASSERT(R >= 1, "text encoder forward without rows ({} sequences)", seqs.size());
  Tensor out = Tensor::empty({R, D}, dt, Device::kCUDA);  // [R, D]
  // One sequence per pass, as on the host (umt5.cpp): every GEMM of a sequence has that sequence's
  // row count, so the algorithm cuBLASLt picks, and the result, do not depend on its neighbours.
  int64_t r0 = 0;
  for (auto& s : seqs) {
    const int64_t Lq = int64_t(s.ids.size()), Lk = s.num_valid;
    Tensor ids = Tensor::empty({Lq}, DType::kI64);  // [Lq]
    std::copy(s.ids.begin(), s.ids.end(), ids.data<int64_t>());
    Tensor h = cuda_embedding(embed_, ids.to(Device::kCUDA));  // [Lq, D], no scaling in T5
    // Relative position buckets (host float32 log, as transformers), shared by all layers.
    Tensor buckets = t5_relative_buckets(Lq, Lk, /*bidirectional=*/true, cfg_.num_buckets, cfg_.max_distance)
                         .to(Device::kCUDA);  // [Lq+Lk-1] i64
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Umt5Layer& L = layers_[l];
      const Tensor& table = L.rel_bias.defined() ? L.rel_bias : layers_[0].rel_bias;  // [nb, H]
      // Self-attention sublayer.
      Tensor n = cuda_t5_rms_norm(h, L.ln_attn, eps);  // [Lq, D]
      Tensor q = cuda_linear(n, L.q, Tensor(), dt);    // [Lq, I]
      Tensor k = cuda_linear(n, L.k, Tensor(), dt);    // [Lq, I]
      Tensor v = cuda_linear(n, L.v, Tensor(), dt);    // [Lq, I]
      Tensor bias = cuda_t5_relative_bias(table, buckets);      // [H, Lq+Lk-1] f32
      Tensor att = Tensor::empty({Lq, I}, dt, Device::kCUDA);  // [Lq, I]
      cuda_t5_attention_out(q, k.narrow(0, Lk), v.narrow(0, Lk), bias, H, Lk, att);
      cuda_add_inplace(h, cuda_linear(att, L.o, Tensor(), dt));  // h += att·Woᵀ  [Lq, D]
      // Feed-forward sublayer.
      n = cuda_t5_rms_norm(h, L.ln_ffn, eps);                                           // [Lq, D]
      Tensor g = cuda_linear(n, L.wi0, Tensor(), dt);                                   // [Lq, F]
      Tensor lin = L.wi1.defined() ? cuda_linear(n, L.wi1, Tensor(), dt) : Tensor();  // [Lq, F]
      Tensor act = cuda_t5_gated_act(g, lin, cfg_.act);                                 // [Lq, F]
      cuda_add_inplace(h, cuda_linear(act, L.wo, Tensor(), dt));                        // [Lq, D]
    }
    out.narrow(r0, Lq).copy_from(cuda_t5_rms_norm(h, final_ln_, eps));  // [Lq, D]
    r0 += Lq;
  }
  return out;
}

Tensor Umt5DeviceEncoder::forward(const std::vector<Umt5Sequence>& seqs) const {
  int64_t R = 0;
  for (auto& s : seqs) R += int64_t(s.ids.size());
  if (R == 0) return Tensor::empty({0, cfg_.d_model}, DType::kF32);
  return cast(forward_device(seqs), DType::kF32).to(Device::kCPU);  // [R, D] host f32
}

}  // namespace vgen
