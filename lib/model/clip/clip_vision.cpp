#include "model/clip/clip_vision.h"

#include <fmt/format.h>

#include "ops/activation.h"
#include "ops/device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/norm.h"
#include "parallel/block_attention.h"

namespace vgen {

namespace {

// The checkpoint's tensors under one name prefix ("vision_model." or none), read as f32 with
// their shapes checked.
struct ClipWeightReader {
  const WeightStore& ws;
  std::string prefix;
  std::string where;

  Tensor get(const std::string& name, const Shape& shape) const {
    const std::string full = prefix + name;
    VGEN_CHECK(ws.has(full), ExitCode::kModel, "{}: CLIP vision tensor '{}' is missing", where, full);
    return ws.get_f32(full, shape);
  }
  LinearWeights linear(const std::string& name, int64_t out, int64_t in) const {
    return {get(name + ".weight", {out, in}), get(name + ".bias", {out}), Tensor(), Tensor()};
  }
};

std::string weight_prefix(const WeightStore& ws) {
  return ws.has("vision_model.embeddings.class_embedding") ? "vision_model." : "";
}

ClipVisionLayer read_layer(const ClipWeightReader& r, const ClipVisionConfig& c, int64_t idx) {
  const std::string p = fmt::format("encoder.layers.{}.", idx);
  const int64_t D = c.hidden_size, F = c.intermediate_size;
  ClipVisionLayer l;
  l.ln1_w = r.get(p + "layer_norm1.weight", {D});
  l.ln1_b = r.get(p + "layer_norm1.bias", {D});
  l.q = r.linear(p + "self_attn.q_proj", D, D);
  l.k = r.linear(p + "self_attn.k_proj", D, D);
  l.v = r.linear(p + "self_attn.v_proj", D, D);
  l.o = r.linear(p + "self_attn.out_proj", D, D);
  l.ln2_w = r.get(p + "layer_norm2.weight", {D});
  l.ln2_b = r.get(p + "layer_norm2.bias", {D});
  l.fc1 = r.linear(p + "mlp.fc1", F, D);
  l.fc2 = r.linear(p + "mlp.fc2", D, F);
  return l;
}

// A host f32 weight on the current GPU in `dt` (converted there).
Tensor upload(const Tensor& t, DType dt) { return t.defined() ? cast(t.to(Device::kCUDA), dt) : t; }

void upload(LinearWeights& l, DType dt) {
  l.w = upload(l.w, dt);
  l.b = upload(l.b, dt);  // the dtype of x: the fused bias + residual GEMM epilogue takes it
}

}  // namespace

ClipVisionEncoder ClipVisionEncoder::load(const std::string& dir) {
  return ClipVisionEncoder(ClipVisionConfig::load(dir), WeightStore::open(dir), dir);
}

ClipVisionEncoder::ClipVisionEncoder(const ClipVisionConfig& cfg, const WeightStore& weights, const std::string& where)
    : cfg_(cfg) {
  const ClipWeightReader r{weights, weight_prefix(weights), where};
  const int64_t D = cfg.hidden_size, C = cfg.num_channels, P = cfg.patch_size;
  patch_.w = r.get("embeddings.patch_embedding.weight", {D, C, P, P}).reshape({D, C * P * P});  // [D, C·P·P]
  class_emb_ = r.get("embeddings.class_embedding", {D});                                        // [D]
  pos_emb_ = r.get("embeddings.position_embedding.weight", {cfg.num_positions(), D});           // [S, D]
  pre_ln_w_ = r.get("pre_layrnorm.weight", {D});
  pre_ln_b_ = r.get("pre_layrnorm.bias", {D});
  // hidden_states[-2]: the layers before the last one.
  for (int64_t i = 0; i + 1 < cfg.num_hidden_layers; ++i) layers_.push_back(read_layer(r, cfg, i));
}

void ClipVisionEncoder::to_device(DType dtype) {
  VGEN_CHECK(dtype == DType::kBF16 || dtype == DType::kF32, ExitCode::kInternal,
             "CLIP vision on the device computes in bf16 or f32, not {}", dtype_name(dtype));
  VGEN_CHECK(device_ == Device::kCPU, ExitCode::kInternal, "CLIP vision: the weights are already on the device");
  upload(patch_, dtype);
  class_emb_ = upload(class_emb_, dtype);
  pos_emb_ = upload(pos_emb_, dtype);
  pre_ln_w_ = upload(pre_ln_w_, DType::kF32);
  pre_ln_b_ = upload(pre_ln_b_, DType::kF32);
  for (ClipVisionLayer& l : layers_) {
    for (Tensor* t : {&l.ln1_w, &l.ln1_b, &l.ln2_w, &l.ln2_b}) *t = upload(*t, DType::kF32);
    for (LinearWeights* lw : {&l.q, &l.k, &l.v, &l.o, &l.fc1, &l.fc2}) upload(*lw, dtype);
  }
  device_ = Device::kCUDA;
  dtype_ = dtype;
}

Tensor ClipVisionEncoder::embed(const Tensor& pixel_values) const {
  const int64_t B = pixel_values.dim(0), C = cfg_.num_channels, H = cfg_.image_size, N = cfg_.num_patches();
  const int64_t D = cfg_.hidden_size;
  const int P = int(cfg_.patch_size);
  // The stride-P conv as a gather of each patch's (c, kh, kw) values and a GEMM with the flattened
  // conv weight: patchify of a one-frame video with patch (1, P, P).
  const Tensor px = pixel_values.to(device_).reshape({B, C, 1, H, H});  // [B, C, 1, H, W] f32
  const Tensor patches = patchify(px, {1, P, P}, 0, N, dtype_);         // [B, N, C·P·P]
  const Tensor pe = linear(patch_, patches, LinearMode{});              // [B, N, D]
  Tensor x = Tensor::empty({B, 1 + N, D}, dtype_, device_);             // [B, 1 + N, D]
  for (int64_t b = 0; b < B; ++b) {
    Tensor xb = x[b];  // [1 + N, D]
    xb.narrow(0, 1).copy_from(class_emb_);
    xb.narrow(1, N).copy_from(pe[b]);
    add_inplace(xb, pos_emb_);  // + position_embedding(position_ids)
  }
  return x;
}

void ClipVisionEncoder::layer_forward(const ClipVisionLayer& l, Tensor& x) const {
  const int64_t B = x.dim(0), S = x.dim(1), D = x.dim(2), H = cfg_.num_attention_heads, Dh = cfg_.head_dim();
  const float eps = float(cfg_.layer_norm_eps);
  const LinearMode m;
  Tensor n = layer_norm(x, l.ln1_w, l.ln1_b, eps);            // [B, S, D]
  const Tensor q = linear(l.q, n, m).reshape({B, S, H, Dh});  // [B, S, H, Dh]
  const Tensor k = linear(l.k, n, m).reshape({B, S, H, Dh});  // [B, S, H, Dh]
  const Tensor v = linear(l.v, n, m).reshape({B, S, H, Dh});  // [B, S, H, Dh]
  Tensor o = Tensor::empty({B, S, H, Dh}, dtype_, device_);   // [B, S, H, Dh]
  // Every token attends to every token (no mask); block_attention's scale is head_dim^-0.5.
  const AttentionPolicy policy{attention_.backend, attention_.key_split, false, QkFormat::kE4m3};
  block_attention(q, k, v, S, o, nullptr, policy);
  linear_add_(x, l.o, o.reshape({B, S, D}), m);  // x += out_proj(o)
  n = layer_norm(x, l.ln2_w, l.ln2_b, eps);      // [B, S, D]
  Tensor h = linear(l.fc1, n, m);                // [B, S, F]
  if (cfg_.act == ClipActivation::kGelu)
    gelu_erf_(h);
  else
    quick_gelu_(h);
  linear_add_(x, l.fc2, h, m);  // x += fc2(h)
}

Tensor ClipVisionEncoder::penultimate_hidden_states(const Tensor& pixel_values) const {
  const int64_t C = cfg_.num_channels, I = cfg_.image_size;
  VGEN_CHECK(pixel_values.defined() && pixel_values.ndim() == 4 && pixel_values.dim(1) == C &&
                 pixel_values.dim(2) == I && pixel_values.dim(3) == I && pixel_values.dtype() == DType::kF32,
             ExitCode::kInput, "CLIP vision: pixel_values must be f32 [B, {}, {}, {}], got {}", C, I, I,
             pixel_values.defined() ? pixel_values.str() : std::string("undefined"));
  Tensor x = embed(pixel_values);                                       // [B, S, D]
  x = layer_norm(x, pre_ln_w_, pre_ln_b_, float(cfg_.layer_norm_eps));  // hidden_states[0]
  for (const ClipVisionLayer& l : layers_) layer_forward(l, x);         // [B, S, D]
  return x;                                                             // hidden_states[-2]
}

}  // namespace vgen
