#include "model/wan/dit/transformer_block.h"

#include <optional>
#include <utility>

#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/linear_layer.h"
#include "ops/norm.h"
#include "ops/norm_fp8.h"
#include "ops/rope.h"
#include "parallel/block_attention.h"

namespace vgen {
namespace {

using P = DitPhaseProfiler;

// One block of one forward: its run, weights, policy and modulation [B, 6, D] or per token
// [B, S, 6, D] f32 (shift1, scale1, gate1, shift2, scale2, gate2).
struct Block {
  Block(const WanBlockRun& r, const WanBlockWeights& bw, const WanBlockPolicy& bp, const Tensor& x)
      : run(r), w(bw), p(bp), B(x.dim(0)), S(x.dim(1)), D(x.dim(2)), H(r.cfg.num_attention_heads),
        Dh(r.cfg.attention_head_dim), eps(float(r.cfg.eps)) {}
  const WanBlockRun& run;
  const WanBlockWeights& w;
  const WanBlockPolicy& p;
  Tensor mod;
  const int64_t B, S, D, H, Dh;
  const float eps;

  template <typename F> auto phase(P::Phase ph, F&& f) const { return timed(run.profiler, ph, std::forward<F>(f)); }
  // The mode of block linear `idx` (for_each_fp8_linear's order): fp8 where this block runs it so.
  LinearMode mode(WanFp8Linear idx) const {
    return {p.fp8.linear_in_fp8(idx), p.fp8.gemm_format, p.rows, run.fusion.dtype};
  }
  Tensor linear(const WanLinear& l, WanFp8Linear idx, const Tensor& x, Activation act = Activation::kNone,
                const Fp8Activation* xq = nullptr) const {
    return phase(P::kGemm, [&] { return vgen::linear(l, x, mode(idx), act, xq); });
  }
};

// x += g ⊙ (in·wᵀ + b), g = mod[b, gate_idx] per sample b, in the GEMM's epilogue: the gate is
// folded into a copy of the weights (once when every sample has the same gates, else per sample).
// False, with nothing done, where the fold does not pay (folds_gate) or the gates are per token
// (no weight copy serves a row of its own): the caller adds the residual in a norm. x [B, S, N],
// in [B, S, K].
bool gated_linear_add(const Block& b, const WanLinear& l, WanFp8Linear idx, const Tensor& in, int gate_idx, Tensor& x) {
  if (b.mod.ndim() == 4) return false;
  const int64_t B = x.dim(0), S = x.dim(1), N = x.dim(2), K = in.dim(-1);
  const Tensor& w = l.w.defined() ? l.w : l.w8;  // precision fp8 may have freed the bf16 weight
  VGEN_ASSERT(b.mod.dim(0) == B && b.mod.dim(2) == N && w.defined() && w.dim(0) == N,
              "gated_linear_add: mod {} for x {} and w {}", b.mod.str(), x.str(), w.defined() ? w.str() : "undefined");
  const bool same = b.run.fusion.same_gates;
  const int64_t copies = same ? 1 : B;
  const LinearMode m = b.mode(idx);
  if (!m.fp8 && !folds_gate(B * S, K, copies)) return false;
  for (int64_t c = 0; c < copies; ++c) {
    const Tensor gate = b.mod[c][gate_idx];                                     // [N] f32
    const WanLinear g = b.phase(P::kOther, [&] { return fold_gate(l, gate, m); });  // [N, K], [N]
    // Every sample at once (one gate), or sample c alone: [rows, N] views of x, [rows, K] of in.
    Tensor xr = same ? x.reshape({B * S, N}) : x[c];
    const Tensor ir = same ? in.reshape({B * S, K}) : in[c];
    b.phase(P::kGemm, [&] { linear_add_(xr, g, ir, m); });
  }
  return true;
}

// AdaLN (adding the previous block's pending FFN residual in its pass), Q/K/V, QK RMSNorm + RoPE,
// the SeqAttention, out-projection; its gated residual is added here (a GEMM epilogue) or returned
// for the next norm. fp8 GEMMs: the norm's output quantised once per token for q, k and v, by the
// norm's pass where it can (n never written).
Tensor self_attention(const Block& b, Tensor& x, WanPendingResidual& pending, const Tensor& cos, const Tensor& sin,
                      const SeqLayout& layout, SeqAttention& attention) {
  const WanAttentionWeights& a = b.w.attn1;
  const WanBlockFusion& fu = b.run.fusion;
  const GemmFormat f = b.p.fp8.gemm_format;
  const int qkv8 = int(b.mode(kLinSelfQ).fp8) + int(b.mode(kLinSelfK).fp8) + int(b.mode(kLinSelfV).fp8);
  std::optional<Fp8Activation> nq;
  if (qkv8 == 3)
    nq = b.phase(P::kOther, [&] {
      return residual_layer_norm_modulate_fp8(x, pending.out, pending.mod, 5, b.mod, 0, 1, b.eps, f,
                                              fu.fused_residual_norm);
    });
  Tensor n;  // [B, S, D]
  if (!nq) {
    n = b.phase(P::kOther, [&] {
      return residual_layer_norm_modulate(x, pending.out, pending.mod, 5, b.mod, 0, 1, b.eps, fu.fused_residual_norm);
    });
    if (qkv8 > 1) nq = b.phase(P::kGemm, [&] { return quantize_activation_shared(n, f); });  // shared by the fp8 ones
  }
  pending.out = pending.mod = Tensor();
  const Fp8Activation* nqp = nq ? &*nq : nullptr;
  const Shape heads{b.B, b.S, b.H, b.Dh};
  Tensor q0 = b.linear(a.q, kLinSelfQ, n, Activation::kNone, nqp).reshape(heads);  // [B, S, H, Dh]
  Tensor k0 = b.linear(a.k, kLinSelfK, n, Activation::kNone, nqp).reshape(heads);  // [B, S, H, Dh]
  Tensor v = b.linear(a.v, kLinSelfV, n, Activation::kNone, nqp).reshape(heads);   // [B, S, H, Dh]
  n = Tensor();
  nq.reset();
  Tensor q = b.phase(P::kOther, [&] { return rms_norm_rope(q0, a.norm_q, cos, sin, b.eps); });  // [B, S, H, Dh]
  q0 = Tensor();
  Tensor k = b.phase(P::kOther, [&] { return rms_norm_rope(k0, a.norm_k, cos, sin, b.eps); });  // [B, S, H, Dh]
  k0 = Tensor();
  Tensor o = b.phase(P::kSelfAttention, [&] { return attention.forward(q, k, v, layout, b.p.self_attention()); });
  q = k = v = Tensor();
  if (o.dtype() != fu.dtype) o = b.phase(P::kOther, [&] { return cast(o, fu.dtype); });  // Ring/Attention2D merge in fp32
  const Tensor o2 = o.reshape({b.B, b.S, b.D});  // [B, S, D]
  o = Tensor();
  // x += gate1 ⊙ (o·Woᵀ + bo) in the GEMM epilogue, or the update for the cross-attention norm.
  if (fu.fused_residual_gemm && gated_linear_add(b, a.o, kLinSelfO, o2, 2, x)) return Tensor();
  return b.linear(a.o, kLinSelfO, o2);  // [B, S, D]
}

// Local queries against every text position (no mask), plus on the image path every image token
// (a second attention whose output adds to the text's, as diffusers' WanAttnProcessor), plain
// residual add (a GEMM epilogue, or returned for the FFN norm). The self-attention's gated residual
// `self_out` (undefined when an epilogue added it) is added by the norm's pass when there is one.
Tensor cross_attention(const Block& b, Tensor& x, Tensor& self_out, const WanCrossKv& kv) {
  const WanBlockWeights& w = b.w;
  const WanBlockFusion& fu = b.run.fusion;
  const bool norm = b.run.cfg.cross_attn_norm;
  // fp8 GEMMs with the residual already in x: the norm writes the quantised input of attn2.q directly.
  std::optional<Fp8Activation> nq;
  if (!self_out.defined() && norm && b.mode(kLinCrossQ).fp8)
    nq = b.phase(P::kOther, [&] { return layer_norm_fp8(x, w.norm2_w, w.norm2_b, b.eps, b.p.fp8.gemm_format); });
  Tensor n;  // [B, S, D]
  if (!nq)
    n = b.phase(P::kOther, [&] {
      if (norm) return residual_layer_norm(x, self_out, b.mod, 2, w.norm2_w, w.norm2_b, b.eps, fu.fused_residual_norm);
      if (self_out.defined()) gated_residual_(x, self_out, b.mod, 2);
      return Tensor(x);
    });
  self_out = Tensor();
  Tensor q0 = b.linear(w.attn2.q, kLinCrossQ, n, Activation::kNone, nq ? &*nq : nullptr);  // [B, S, D]
  n = Tensor();
  Tensor q = b.phase(P::kOther, [&] { return rms_norm(q0, w.attn2.norm_q, b.eps); }).reshape({b.B, b.S, b.H, b.Dh});
  q0 = Tensor();
  Tensor o = Tensor::empty({b.B, b.S, b.H, b.Dh}, fu.dtype, x.device());  // [B, S, H, Dh]
  b.phase(P::kCrossAttention, [&] { block_attention(q, kv.k, kv.v, kv.k.dim(1), o, nullptr, b.p.cross_attention()); });
  if (kv.image_k.defined()) {
    Tensor oi = Tensor::empty({b.B, b.S, b.H, b.Dh}, fu.dtype, x.device());  // [B, S, H, Dh]
    b.phase(P::kCrossAttention, [&] {
      block_attention(q, kv.image_k, kv.image_v, kv.image_k.dim(1), oi, nullptr, b.p.cross_attention());
    });
    b.phase(P::kOther, [&] { add_inplace(o, oi); });  // text + image, one rounding as diffusers' sum
  }
  q = Tensor();
  const Tensor o2 = o.reshape({b.B, b.S, b.D});  // [B, S, D]
  o = Tensor();
  if (!fu.fused_residual_gemm) return b.linear(w.attn2.o, kLinCrossO, o2);  // [B, S, D]
  b.phase(P::kGemm, [&] { linear_add_(x, w.attn2.o, o2, b.mode(kLinCrossO)); });  // x += o·Woᵀ + bo
  return Tensor();
}

// AdaLN (adding the cross-attention's update `cross_out` in its pass), FFN (GELU-tanh); the gated
// residual runs in ffn2's epilogue or is left pending for the next norm.
void feed_forward(const Block& b, Tensor& x, Tensor& cross_out, WanPendingResidual& pending) {
  const WanBlockFusion& fu = b.run.fusion;
  std::optional<Fp8Activation> nq;  // fp8 GEMMs: the norm writes ffn1's quantised input where it can
  if (b.mode(kLinFfn1).fp8)
    nq = b.phase(P::kOther, [&] {
      return residual_layer_norm_modulate_fp8(x, cross_out, Tensor(), -1, b.mod, 3, 4, b.eps, b.p.fp8.gemm_format,
                                              fu.fused_residual_norm);
    });
  Tensor n;  // [B, S, D]
  if (!nq)
    n = b.phase(P::kOther, [&] {
      return residual_layer_norm_modulate(x, cross_out, Tensor(), -1, b.mod, 3, 4, b.eps, fu.fused_residual_norm);
    });
  cross_out = Tensor();
  const Activation act = fu.fused_gelu ? Activation::kGeluTanh : Activation::kNone;
  Tensor h = b.linear(b.w.ffn1, kLinFfn1, n, act, nq ? &*nq : nullptr);  // [B, S, ffn]
  n = Tensor();
  nq.reset();
  if (!fu.fused_gelu) b.phase(P::kOther, [&] { gelu_tanh_(h); });
  // x += gate2 ⊙ (h·W2ᵀ + b2) in the GEMM epilogue, or the update for the next norm.
  if (fu.fused_residual_gemm && gated_linear_add(b, b.w.ffn2, kLinFfn2, h, 5, x)) return;
  pending.out = b.linear(b.w.ffn2, kLinFfn2, h);  // [B, S, D]
  pending.mod = b.mod;
}

}  // namespace

void WanPendingResidual::flush(Tensor& x, DitPhaseProfiler* profiler) {
  if (out.defined()) timed(profiler, P::kOther, [&] { gated_residual_(x, out, mod, 5); });
  out = mod = Tensor();
}

void wan_block_forward(const WanBlockRun& run, const WanBlockWeights& w, Tensor& x, WanPendingResidual& pending,
                       const WanTimeEmbedding& time, const Tensor& cos, const Tensor& sin, const WanCrossKv& kv,
                       const SeqLayout& layout, SeqAttention& attention, const WanBlockPolicy& policy) {
  Block b(run, w, policy, x);
  VGEN_ASSERT(time.tproj.dim(-1) == 6 * b.D, "wan_block_forward: tproj {} for x {}", time.tproj.str(), x.str());
  b.mod = b.phase(P::kOther, [&] {
    return wan_block_modulation(time, w.scale_shift_table, b.B, b.S);  // [B, 6, D] or [B, S, 6, D] f32
  });
  Tensor self_out = self_attention(b, x, pending, cos, sin, layout, attention);  // [B, S, D] or undefined
  Tensor cross_out = cross_attention(b, x, self_out, kv);                       // [B, S, D] or undefined
  feed_forward(b, x, cross_out, pending);
}

}  // namespace vgen
