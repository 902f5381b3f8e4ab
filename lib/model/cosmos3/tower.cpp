#include "model/cosmos3/tower.h"

#include <optional>

#include "ops/device_ops.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "ops/t5_ops.h"

namespace vgen {
namespace {

// [1, S, heads·Dh] → [1, S, heads, Dh], the per-head norm when the tower has one, then RoPE.
Tensor heads_norm_rope(const Tensor& y, int64_t heads, int64_t Dh, const Tensor& norm, float eps,
                       const MropeTables& rope) {
  Tensor t = y.reshape({1, y.dim(1), heads, Dh});  // [1, S, heads, Dh]
  if (norm.defined()) t = rms_norm(t, norm, eps);  // per head, over Dh
  else t = t.clone();
  rope_(t, rope.cos, rope.sin);
  return t;
}

}  // namespace

TowerQkv tower_qkv(const Cosmos3Config& cfg, const Cosmos3Tower& w, const Tensor& x, const MropeTables& rope,
                   const TowerModes& m) {
  const float eps = float(cfg.rms_norm_eps);
  const int64_t S = x.dim(1), Dh = cfg.head_dim;
  const Tensor h = rms_norm(x, w.in_norm, eps);  // [1, S, D]
  // fp8 on the device: h quantised per token once for the projections that run in fp8 (host: nullopt).
  const bool any8 = m.q.fp8 || m.k.fp8 || m.v.fp8;
  const std::optional<Fp8Activation> hq = any8 ? quantize_activation_shared(h, m.q.format) : std::nullopt;
  auto shared = [&](const LinearMode& mk) { return hq && mk.fp8 ? &*hq : nullptr; };
  const Tensor q = linear(w.q, h, m.q, Activation::kNone, shared(m.q));  // [1, S, H·Dh]
  const Tensor k = linear(w.k, h, m.k, Activation::kNone, shared(m.k));  // [1, S, KVH·Dh]
  TowerQkv r;
  r.q = heads_norm_rope(q, cfg.num_attention_heads, Dh, w.q_norm, eps, rope);  // [1, S, H, Dh]
  r.k = heads_norm_rope(k, cfg.num_key_value_heads, Dh, w.k_norm, eps, rope);  // [1, S, KVH, Dh]
  // k_norm_und_for_gen reads the keys after norm_k (the identity when it exists).
  if (w.k_norm_for_gen.defined())
    r.k_other = heads_norm_rope(k, cfg.num_key_value_heads, Dh, w.k_norm_for_gen, eps, rope);  // [1, S, KVH, Dh]
  const Tensor v = linear(w.v, h, m.v, Activation::kNone, shared(m.v));  // [1, S, KVH·Dh]
  r.v = v.reshape({1, S, cfg.num_key_value_heads, Dh});                  // [1, S, KVH, Dh]
  return r;
}

void tower_finish(const Cosmos3Config& cfg, const Cosmos3Tower& w, Tensor& x, const Tensor& o, const TowerModes& m) {
  const int64_t S = x.dim(1);
  const Tensor o2 = (o.dtype() == x.dtype() ? o : cast(o, x.dtype())).reshape({1, S, cfg.q_dim()});  // [1, S, H·Dh]
  linear_add_(x, w.o, o2, m.o);                                        // x += o·Woᵀ + bo, [1, S, D]
  const Tensor h = rms_norm(x, w.post_norm, float(cfg.rms_norm_eps));  // [1, S, D]
  // The gated MLP's two fp8 projections share h's quantisation (device; host: nullopt).
  const bool share = w.gate.w8.defined() && m.gate.fp8 && m.up.fp8;
  const std::optional<Fp8Activation> hq = share ? quantize_activation_shared(h, m.up.format) : std::nullopt;
  const Fp8Activation* hqp = hq ? &*hq : nullptr;
  Tensor act;
  if (cfg.hidden_act == Cosmos3Act::kSilu) {
    act = t5_gated_act(linear(w.gate, h, m.gate, Activation::kNone, hqp), linear(w.up, h, m.up, Activation::kNone, hqp),
                       kern::T5Act::kSilu);  // silu(gate)·up, [1, S, F]
  } else {
    const Tensor u = linear(w.up, h, m.up);        // [1, S, F]
    act = t5_gated_act(u, u, kern::T5Act::kRelu);  // relu(u)·u = relu(u)²
  }
  linear_add_(x, w.down, act, m.down);  // x += act·Wdᵀ, [1, S, D]
}

}  // namespace vgen
