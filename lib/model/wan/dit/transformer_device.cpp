// Forward pass of the Wan DiT on the device (see transformer_device.h). Built in both
// configurations: the device ops it calls throw kUsage in a CPU-only build.
#include "model/wan/dit/transformer_device.h"
#include "ops/attention_backend.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <type_traits>

#include "core/on_unwind.h"
#include "model/wan/dit/transformer.h"
#include "ops/activation.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/fp8.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace vgen {

template <typename F> auto WanDeviceModel::timed(DitPhaseProfiler::Phase p, F&& f) const {
  if (!prof_) return f();
  prof_->start(p);
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    prof_->stop();
  } else {
    auto r = f();
    prof_->stop();
    return r;
  }
}

namespace {

using P = DitPhaseProfiler;

// x += y·gate (row gate_idx of gate_mod; −1: x += y), then the AdaLN of x — in one pass, or as the
// two ops (fused false).
Tensor residual_norm_modulate(bool fused, Tensor& x, const Tensor& y, const Tensor& gate_mod, int gate_idx,
                              const Tensor& mod, int shift_idx, int scale_idx, float eps) {
  if (fused) return cuda_residual_layer_norm_modulate(x, y, gate_mod, gate_idx, mod, shift_idx, scale_idx, eps);
  if (gate_idx < 0)
    add_inplace(x, y);
  else
    gated_residual_(x, y, gate_mod, gate_idx);
  return layer_norm_modulate(x, mod, shift_idx, scale_idx, eps);
}

// residual_norm_modulate (y defined) or the plain AdaLN, straight into the e4m3 or INT8 input of the
// fp8 GEMMs that read it (cuda_*_fp8: the same values as the op and then cuda_quantize_activation).
// Nullopt, with nothing done, where the fused kernel does not apply or the residual runs as two ops
// (fused false).
std::optional<Fp8Activation> norm_modulate_fp8(bool fused, Tensor& x, const Tensor& y, const Tensor& gate_mod,
                                               int gate_idx, const Tensor& mod, int shift_idx, int scale_idx,
                                               float eps, GemmFormat f) {
  Fp8Activation q;
  const bool ran = !y.defined() ? cuda_layer_norm_modulate_fp8(x, mod, shift_idx, scale_idx, eps, q, f)
                   : fused      ? cuda_residual_layer_norm_modulate_fp8(x, y, gate_mod, gate_idx, mod, shift_idx,
                                                                        scale_idx, eps, q, f)
                                : false;
  return ran ? std::optional<Fp8Activation>(std::move(q)) : std::nullopt;
}

Tensor on_device(const Tensor& t) { return t.is_cpu() ? t.to(Device::kCUDA) : t; }

// Host or device tensor of any float dtype (or i64 timesteps) → device f32.
Tensor device_f32(const Tensor& t) {
  Tensor h = t;
  if (h.is_cpu() && h.dtype() != DType::kF32) h = h.to(DType::kF32);
  return cast(on_device(h), DType::kF32);
}

}  // namespace

WanDeviceModel::WanDeviceModel(const WanTransformerConfig& cfg, WanTransformerWeights device_weights,
                               const WanDeviceOptions& options)
    : cfg_(cfg), w_(std::move(device_weights)), opt_(options), rope_(cfg) {
  VGEN_CHECK(opt_.dtype == DType::kBF16 || opt_.dtype == DType::kF32, ExitCode::kUsage,
             "the device DiT computes in bf16 or fp32, not {}", dtype_name(opt_.dtype));
  VGEN_ASSERT(int(w_.blocks.size()) == cfg_.num_layers, "device weights have {} blocks, config {}", w_.blocks.size(),
              cfg_.num_layers);
  VGEN_ASSERT(w_.patch_embedding.w.defined() && !w_.patch_embedding.w.is_cpu(),
              "WanDeviceModel needs device weights");
  weight_bytes_ = w_.bytes;
}

WanDeviceModel::~WanDeviceModel() {
  if (!dwdp_ || !opt_.world || std::uncaught_exceptions() > 0) return;
  try {
    sync_compute_stream();
    opt_.world->barrier();
  } catch (...) {
    // Teardown: a failed barrier means the job is ending anyway (a peer died or aborted).
  }
}

void WanDeviceModel::set_dwdp(std::shared_ptr<DwdpDeviceWeights> weights, WanBlockWeights staged0,
                              WanBlockWeights staged1) {
  dwdp_ = std::move(weights);
  staged_[0] = std::move(staged0);
  staged_[1] = std::move(staged1);
  weight_bytes_ = w_.bytes + dwdp_->device_bytes();  // w_'s blocks are none or views of the arena
}

const WanBlockWeights& WanDeviceModel::block_begin(size_t i) const {
  if (!dwdp_) return w_.blocks[i];
  const int s = dwdp_->acquire(int(i));
  return s < 0 ? w_.blocks[i] : staged_[s];
}

void WanDeviceModel::block_end(size_t i) const {
  if (dwdp_) dwdp_->release(int(i));
}

Tensor WanDeviceModel::linear(const WanLinear& l, const Tensor& x, bool gelu) const {
  return timed(P::kGemm, [&] {
    return cuda_linear(x, l.w, l.b, x.dtype(), gelu ? Activation::kGeluTanh : Activation::kNone);
  });
}

bool WanDeviceModel::fp8_gemm(const WanLinear& l, const Fp8Switches& sw) const {
  if (sw.gemm && l.w8.defined()) return true;
  VGEN_CHECK(l.w.defined(), ExitCode::kInternal,
             "a block linear runs in bf16 but only its quantised weight is on the device (precision fp8 freed the bf16 "
             "weights: WanFp8Options::keep_weights false, yet this step runs in bf16)");
  return false;
}

Tensor WanDeviceModel::block_linear(const WanLinear& l, const Tensor& x, const Fp8Switches& sw, bool gelu,
                                    const Fp8Activation* xq) const {
  if (!fp8_gemm(l, sw)) return linear(l, x, gelu);
  return timed(P::kGemm, [&] {
    const Activation act = gelu ? Activation::kGeluTanh : Activation::kNone;
    const Fp8Weight w{l.w8, l.w_scale};
    // Out in the compute dtype (bf16: enable_fp8 requires it); with xq, x may be undefined (a fused norm).
    return xq ? cuda_linear_fp8(*xq, w, l.b, opt_.dtype, act) : cuda_linear_fp8(x, w, l.b, opt_.dtype, act);
  });
}

void WanDeviceModel::linear_add(const WanLinear& l, const Tensor& in, Tensor& x, const Fp8Switches& sw) const {
  if (fp8_gemm(l, sw)) {
    timed(P::kGemm, [&] { cuda_linear_fp8_add_(x, in, l.w8, l.w_scale, l.b); });
    return;
  }
  timed(P::kGemm, [&] { cuda_linear_add_(x, in, l.w, l.b); });
}

bool WanDeviceModel::gated_linear_add(const WanLinear& l, const Tensor& in, const Tensor& mod, int gate_idx,
                                      bool same_gates, Tensor& x, const Fp8Switches& sw) const {
  const int64_t B = x.dim(0), S = x.dim(1), N = x.dim(2), K = in.dim(-1);
  const Tensor& w = l.w.defined() ? l.w : l.w8;  // precision fp8 may have freed the bf16 weight
  VGEN_ASSERT(mod.ndim() == 3 && mod.dim(0) == B && gate_idx >= 0 && gate_idx < mod.dim(1) && mod.dim(2) == N &&
                  w.defined() && w.dim(0) == N,
              "gated_linear_add: mod {} gate {} for x {} and w {}", mod.str(), gate_idx, x.str(),
              w.defined() ? w.str() : "undefined");
  const int64_t copies = same_gates ? 1 : B;
  if (fp8_gemm(l, sw)) {
    // e4m3 or INT8: the gate folds into the per-channel weight scale and the bias ([N] each, so always).
    for (int64_t c = 0; c < copies; ++c) {
      const Tensor gate = mod[c][gate_idx];  // [N] f32
      // [N]: w_scale·g in f32; b·g rounded to the bias's dtype (bf16), as cuda_scale_rows rounds it on
      // the bf16 path, so cuBLASLt's fused bias + residual epilogue takes it (an f32 bias has no fused
      // kernel with bf16 out: an extra f32 pass over the output).
      Tensor sg, bg;
      timed(P::kOther, [&] {
        sg = cuda_fp8_scale_vector(l.w_scale, gate);
        if (l.b.defined()) bg = cast(cuda_fp8_scale_vector(cast(l.b, DType::kF32), gate), l.b.dtype());
      });
      Tensor xr = same_gates ? x.reshape({B * S, N}) : x[c];
      const Tensor ir = same_gates ? in.reshape({B * S, K}) : in[c];
      timed(P::kGemm, [&] { cuda_linear_fp8_add_(xr, ir, l.w8, sg, bg); });
    }
    return true;
  }
  if (!folds_gate(B * S, K, copies)) return false;
  for (int64_t c = 0; c < copies; ++c) {
    const Tensor gate = mod[c][gate_idx];  // [N] f32
    Tensor wg, bg;                         // [N, K], [N]: the gated weight and bias
    timed(P::kOther, [&] {
      wg = cuda_scale_rows(l.w, gate);
      if (l.b.defined()) bg = cuda_scale_rows(l.b, gate);
    });
    // Every sample at once (one gate), or sample c alone: [rows, N] views of x, [rows, K] of in.
    Tensor xr = same_gates ? x.reshape({B * S, N}) : x[c];
    const Tensor ir = same_gates ? in.reshape({B * S, K}) : in[c];
    timed(P::kGemm, [&] { cuda_linear_add_(xr, ir, wg, bg); });
  }
  return true;
}

void WanDeviceModel::rope_rows(int64_t frames, int64_t rows, int64_t cols, int64_t begin, int64_t count, Tensor& cos,
                               Tensor& sin) const {
  std::lock_guard<std::mutex> lk(rope_mu_);
  const int64_t key[5] = {frames, rows, cols, begin, count};
  if (!std::equal(key, key + 5, rope_key_)) {
    Tensor c, s;  // [count, Dh] f32 on the host, from global positions
    rope_.make(frames, rows, cols, begin, count, c, s);
    rope_cos_ = c.to(Device::kCUDA);
    rope_sin_ = s.to(Device::kCUDA);
    std::copy(key, key + 5, rope_key_);
  }
  cos = rope_cos_;
  sin = rope_sin_;
}

TextContext WanDeviceModel::prepare_text(const Tensor& encoder_hidden_states) const {
  VGEN_CHECK(encoder_hidden_states.ndim() == 3 && encoder_hidden_states.dim(2) == cfg_.text_dim, ExitCode::kInput,
             "encoder_hidden_states must be [B, L, {}], got {}", cfg_.text_dim, encoder_hidden_states.str());
  const DType dt = opt_.dtype;
  const int64_t B = encoder_hidden_states.dim(0), L = encoder_hidden_states.dim(1);
  const int64_t H = cfg_.num_attention_heads, Dh = cfg_.attention_head_dim;
  const float eps = float(cfg_.eps);
  Tensor e = timed(P::kOther, [&] { return cast(device_f32(encoder_hidden_states), dt); });  // [B, L, text_dim]
  Tensor h = linear(w_.text_linear_1, e, opt_.fused_gelu);                                  // [B, L, D]
  if (!opt_.fused_gelu) timed(P::kOther, [&] { gelu_tanh_(h); });
  Tensor ctx = linear(w_.text_linear_2, h);  // [B, L, D]
  TextContext tc;
  tc.batch = B;
  tc.length = L;
  tc.k.reserve(w_.blocks.size());
  tc.v.reserve(w_.blocks.size());
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    const WanBlockWeights& b = block_begin(i);
    OnUnwind end_on_error([&] { block_end(i); });  // a DWDP slot stays usable after an error
    Tensor k = linear(b.attn2.k, ctx);
    tc.k.push_back(timed(P::kOther, [&] { return rms_norm(k, b.attn2.norm_k, eps); }).reshape({B, L, H, Dh}));
    tc.v.push_back(linear(b.attn2.v, ctx).reshape({B, L, H, Dh}));  // [B, L, H, Dh]
    block_end(i);
  }
  return tc;
}

Tensor WanDeviceModel::forward_local(const Tensor& latents0, const Tensor& timestep0, const TextContext& text,
                                     const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                     const StepPolicy& step) const {
  const auto& p = cfg_.patch_size;
  const Shape& ls = latents0.shape();
  VGEN_CHECK(ls.size() == 5 && ls[1] == cfg_.in_channels && ls[2] % p[0] == 0 && ls[3] % p[1] == 0 &&
                 ls[4] % p[2] == 0,
             ExitCode::kInput,
             "transformer input must be [B, {}, T, H, W] with T, H, W divisible by the patch [{}, {}, {}]; got {}",
             cfg_.in_channels, p[0], p[1], p[2], shape_str(ls));
  const int64_t B = ls[0], D = cfg_.dim(), S = (ls[2] / p[0]) * (ls[3] / p[1]) * (ls[4] / p[2]);
  VGEN_CHECK(timestep0.ndim() == 1 && timestep0.dim(0) == B, ExitCode::kInput,
             "timestep must be [B] = [{}] (one per sample), got {}", B, timestep0.str());
  VGEN_CHECK(text.batch == B && text.k.size() == w_.blocks.size() && text.v.size() == w_.blocks.size(),
             ExitCode::kInput, "text context of batch {} with {} blocks for latents {} and {} blocks", text.batch,
             text.k.size(), latents0.str(), w_.blocks.size());
  VGEN_CHECK(text.k.empty() || (!text.k[0].is_cpu() && text.k[0].dtype() == opt_.dtype), ExitCode::kInternal,
             "the device DiT needs the text K/V of its own prepare_text (device {}), got {}", dtype_name(opt_.dtype),
             text.k[0].str());
  VGEN_ASSERT(layout.tokens == S && layout.degree >= 1 && layout.seq_rank >= 0 && layout.seq_rank < layout.degree &&
                  layout.padded >= S && layout.padded % layout.degree == 0,
              "sequence layout (tokens {}, padded {}, degree {}, rank {}) for {} tokens", layout.tokens,
              layout.padded, layout.degree, layout.seq_rank, S);
  const DType dt = opt_.dtype;
  const int64_t begin = layout.begin(), S_loc = layout.local();
  const float eps = float(cfg_.eps);
  // precision fp8: what this forward runs in e4m3 (none on a bf16 step of the denoising loop).
  const Fp8Switches fwd{fp8_.attention && step.fp8, fp8_.gemm && step.fp8, fp8_.qk_int8, 0, fp8_.gemm_format};

  // Patch embedding of the local tokens (the gather rounds the latents to the compute dtype, as
  // diffusers' latents.to(bf16) before the Conv3d).
  Tensor latents = on_device(latents0);
  if (latents.dtype() != DType::kF32 && latents.dtype() != DType::kBF16) latents = device_f32(latents);
  Tensor patches = timed(P::kOther, [&] { return cuda_patchify(latents, p, begin, S_loc, dt); });
  Tensor x = linear(w_.patch_embedding, patches);  // [B, S_loc, D] from [B, S_loc, Cin·P]

  Tensor cos, sin;  // [S_loc, Dh] f32
  rope_rows(ls[2] / p[0], ls[3] / p[1], ls[4] / p[2], begin, S_loc, cos, sin);

  // Condition embedder: fp32 time MLP (time_embedder stays fp32), temb rounded to the compute
  // dtype, time_proj(SiLU(temb)) in the compute dtype, modulation rows fp32.
  Tensor sinus = timed(P::kOther, [&] {
    return timestep_embedding(device_f32(timestep0), cfg_.freq_dim, /*flip_sin_to_cos=*/true, /*freq_shift=*/0.0f);
  });                                                   // [B, F] f32
  Tensor t1 = linear(w_.time_linear_1, sinus);          // [B, D] f32
  timed(P::kOther, [&] { silu_(t1); });
  Tensor temb32 = linear(w_.time_linear_2, t1);         // [B, D] f32
  Tensor temb = timed(P::kOther, [&] { return cast(temb32, dt); });              // [B, D] compute dtype
  Tensor tproj_in = timed(P::kOther, [&] { return silu(temb); });
  Tensor tproj_dt = linear(w_.time_proj, tproj_in);                              // [B, 6D] compute dtype
  Tensor tproj = timed(P::kOther, [&] { return cast(tproj_dt, DType::kF32); });  // [B, 6D] f32

  // One timestep for the whole batch (the denoising loop's case): one modulation, so one gated copy
  // of a weight serves every sample. Known only for host timesteps.
  bool same_gates = B == 1;
  if (!same_gates && timestep0.is_cpu()) {
    const Tensor t = timestep0.to(DType::kF32);
    same_gates = std::all_of(t.f32(), t.f32() + B, [&](float v) { return v == t.f32()[0]; });
  }
  Tensor ffn_out, ffn_mod;  // the last block's feed-forward output, not yet added to x
  const bool caching = cache && cache->enabled();
  VGEN_CHECK(!caching || !dwdp_, ExitCode::kUsage,
             "the first-block cache does not run with DWDP (cache_config.first_block_threshold with "
             "parallel_config.dwdp_size > 1)");
  if (caching) timed(P::kOther, [&] { cache->begin(x); });
  for (size_t i = 0; i < w_.blocks.size(); ++i) {
    if (i == 1 && caching) {
      // Block 0's pending FFN residual first: the cache compares and stores whole updates of x.
      if (ffn_out.defined()) timed(P::kOther, [&] { gated_residual_(x, ffn_out, ffn_mod, 5); });
      ffn_out = ffn_mod = Tensor();
      if (timed(P::kOther, [&] { return cache->try_skip(x, layout); })) break;
    }
    const WanBlockWeights& w = block_begin(i);
    OnUnwind end_on_error([&] { block_end(i); });
    const WanBlockPolicy policy{fp8_.block_switches(int64_t(i), int64_t(w_.blocks.size()), fwd), LinearRows::kBatched,
                                backend_};
    block_forward(w, x, ffn_out, ffn_mod, same_gates, tproj, cos, sin, text.k[i], text.v[i], layout, attention, policy);
    block_end(i);
  }
  if (ffn_out.defined()) timed(P::kOther, [&] { gated_residual_(x, ffn_out, ffn_mod, 5); });
  ffn_out = Tensor();
  if (caching) timed(P::kOther, [&] { cache->end(x); });

  // Head: shift/scale = table [2, D] + float(temb) per sample, AdaLN, proj_out.
  Tensor temb_f = cast(temb, DType::kF32);  // the rounded temb, as diffusers adds it
  Tensor head_mod = Tensor::empty({B, 2, D}, DType::kF32, Device::kCUDA);  // [B, 2, D]
  timed(P::kOther, [&] {
    for (int64_t b = 0; b < B; ++b) {
      Tensor dst = head_mod[b];
      dst.copy_from(add_row(w_.scale_shift_table, temb_f[b]));
    }
  });
  Tensor y = timed(P::kOther, [&] { return layer_norm_modulate(x, head_mod, 0, 1, eps); });  // [B, S_loc, D]
  return linear(w_.proj_out, y);                                                          // [B, S_loc, P·C_out]
}

void WanDeviceModel::block_forward(const WanBlockWeights& w, Tensor& x, Tensor& ffn_out, Tensor& ffn_mod,
                                   bool same_gates, const Tensor& tproj, const Tensor& cos, const Tensor& sin,
                                   const Tensor& text_k, const Tensor& text_v, const SeqLayout& layout,
                                   SeqAttention& attention, const WanBlockPolicy& p) const {
  const int64_t B = x.dim(0), S = x.dim(1), D = x.dim(2);
  const int64_t H = cfg_.num_attention_heads, Dh = cfg_.attention_head_dim;
  const float eps = float(cfg_.eps);
  const DType dt = opt_.dtype;

  // [B, 6, D] f32: shift1, scale1, gate1, shift2, scale2, gate2
  Tensor mod =
      timed(P::kOther, [&] { return add_row(tproj, w.scale_shift_table.reshape({6 * D})).reshape({B, 6, D}); });

  Tensor self_out, cross_out;  // [B, S, D] attention outputs before their residual adds
  // Self-attention: AdaLN, Q/K/V, fused QK RMSNorm + RoPE, the SeqAttention, out-projection, gate.
  {
    // The previous block's gated FFN residual is added by the same pass that normalises x. fp8
    // GEMMs: n quantised once per token for q, k and v, by that pass where it can (n never written).
    // fp8_config.bf16_linears may leave some of q/k/v in bf16: then n is written in bf16 as well.
    const int qkv8 = int(fp8_gemm(w.attn1.q, p.fp8)) + int(fp8_gemm(w.attn1.k, p.fp8)) + int(fp8_gemm(w.attn1.v, p.fp8));
    std::optional<Fp8Activation> nq;
    if (qkv8 == 3)
      nq = timed(P::kOther, [&] {
        return norm_modulate_fp8(opt_.fused_residual_norm, x, ffn_out, ffn_mod, 5, mod, 0, 1, eps, fp8_.gemm_format);
      });
    Tensor n;  // [B, S, D]
    if (!nq) {
      n = timed(P::kOther, [&] {
        return ffn_out.defined()
                   ? residual_norm_modulate(opt_.fused_residual_norm, x, ffn_out, ffn_mod, 5, mod, 0, 1, eps)
                   : layer_norm_modulate(x, mod, 0, 1, eps);
      });
      if (qkv8 > 1)  // shared by the fp8 ones
        nq = timed(P::kGemm, [&] { return cuda_quantize_activation(n, fp8_.gemm_format); });
    }
    ffn_out = ffn_mod = Tensor();
    const Fp8Activation* nqp = nq ? &*nq : nullptr;
    Tensor q0 = block_linear(w.attn1.q, n, p.fp8, false, nqp).reshape({B, S, H, Dh});
    Tensor k0 = block_linear(w.attn1.k, n, p.fp8, false, nqp).reshape({B, S, H, Dh});
    Tensor v = block_linear(w.attn1.v, n, p.fp8, false, nqp).reshape({B, S, H, Dh});  // [B, S, H, Dh]
    n = Tensor();
    nq.reset();
    Tensor q = timed(P::kOther, [&] { return rms_norm_rope(q0, w.attn1.norm_q, cos, sin, eps); });
    q0 = Tensor();
    Tensor k = timed(P::kOther, [&] { return rms_norm_rope(k0, w.attn1.norm_k, cos, sin, eps); });
    k0 = Tensor();
    Tensor o = timed(P::kSelfAttention, [&] { return attention.forward(q, k, v, layout, p.self_attention()); });  // [B, S, H, Dh]
    q = k = v = Tensor();
    if (o.dtype() != dt) o = timed(P::kOther, [&] { return cast(o, dt); });  // Ring/Attention2D merge in fp32
    // x += gate2 ⊙ (o·Woᵀ + bo) in the GEMM epilogue, or the update for the cross-attention norm.
    if (!opt_.fused_residual_gemm || !gated_linear_add(w.attn1.o, o.reshape({B, S, D}), mod, 2, same_gates, x, p.fp8))
      self_out = block_linear(w.attn1.o, o.reshape({B, S, D}), p.fp8);  // [B, S, D]
    o = Tensor();
  }
  // Cross-attention: local queries against every text position (no mask), plain residual add. The
  // gated self-attention residual (unless a GEMM epilogue added it) is added by the cross-attention
  // norm's pass when there is one.
  {
    // fp8 GEMMs with the residual already in x: the norm writes the e4m3/INT8 input of attn2.q directly.
    Fp8Activation nq;
    const bool fused8 = !self_out.defined() && cfg_.cross_attn_norm && fp8_gemm(w.attn2.q, p.fp8) &&
                        timed(P::kOther, [&] {
                          return cuda_layer_norm_fp8(x, w.norm2_w, w.norm2_b, eps, nq, fp8_.gemm_format);
                        });
    Tensor n;
    if (!fused8)
      n = timed(P::kOther, [&] {
        if (self_out.defined() && cfg_.cross_attn_norm && opt_.fused_residual_norm)
          return cuda_residual_layer_norm(x, self_out, mod, 2, w.norm2_w, w.norm2_b, eps);
        if (self_out.defined()) gated_residual_(x, self_out, mod, 2);
        return cfg_.cross_attn_norm ? layer_norm(x, w.norm2_w, w.norm2_b, eps) : x;
      });
    self_out = Tensor();
    Tensor q0 = block_linear(w.attn2.q, n, p.fp8, false, fused8 ? &nq : nullptr);  // [B, S, D]
    n = Tensor();
    Tensor q = timed(P::kOther, [&] { return rms_norm(q0, w.attn2.norm_q, eps); }).reshape({B, S, H, Dh});
    q0 = Tensor();
    Tensor o = Tensor::empty({B, S, H, Dh}, dt, Device::kCUDA);
    timed(P::kCrossAttention, [&] {
      cuda_attention_auto(q, text_k, text_v, o, nullptr, text_k.dim(1), float(1.0 / std::sqrt(double(Dh))),
                          p.backend);
    });
    q = Tensor();
    if (opt_.fused_residual_gemm)
      linear_add(w.attn2.o, o.reshape({B, S, D}), x, p.fp8);  // x += o·Woᵀ + bo
    else
      cross_out = block_linear(w.attn2.o, o.reshape({B, S, D}), p.fp8);  // [B, S, D]
    o = Tensor();
  }
  // Feed-forward (GELU-tanh); its gated residual runs in ffn2's epilogue, or is left to the next norm
  // (ffn_out).
  {
    std::optional<Fp8Activation> nq;  // fp8 GEMMs: the norm writes ffn1's quantised input where it can
    if (fp8_gemm(w.ffn1, p.fp8))
      nq = timed(P::kOther, [&] {
        return norm_modulate_fp8(opt_.fused_residual_norm, x, cross_out, Tensor(), -1, mod, 3, 4, eps,
                                 fp8_.gemm_format);
      });
    Tensor n;  // [B, S, D]
    if (!nq)
      n = timed(P::kOther, [&] {
        return cross_out.defined()
                   ? residual_norm_modulate(opt_.fused_residual_norm, x, cross_out, Tensor(), -1, mod, 3, 4, eps)
                   : layer_norm_modulate(x, mod, 3, 4, eps);
      });
    cross_out = Tensor();
    Tensor h = block_linear(w.ffn1, n, p.fp8, opt_.fused_gelu, nq ? &*nq : nullptr);  // [B, S, ffn]
    n = Tensor();
    nq.reset();
    if (!opt_.fused_gelu) timed(P::kOther, [&] { gelu_tanh_(h); });
    // x += gate5 ⊙ (h·W2ᵀ + b2) in the GEMM epilogue, or the update for the next norm.
    if (!opt_.fused_residual_gemm || !gated_linear_add(w.ffn2, h, mod, 5, same_gates, x, p.fp8)) {
      ffn_out = block_linear(w.ffn2, h, p.fp8);  // [B, S, D]
      ffn_mod = mod;
    }
    h = Tensor();
  }
}

Tensor WanDeviceModel::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  Tensor t = on_device(tokens);
  if (t.dtype() != DType::kF32 && t.dtype() != DType::kBF16) t = device_f32(t);
  return cuda_unpatchify(t, cfg_.patch_size, cfg_.out_channels, T, H, W, DType::kF32);
}

}  // namespace vgen
