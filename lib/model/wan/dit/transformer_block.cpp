// One Wan transformer block (wan_spec.md §1.4.4–5) on a sequence shard, fp32:
//   mod = table + tproj;  x += SelfAttn(AdaLN(x; shift1, scale1)) · gate1
//   x += CrossAttn(LN_affine(x), text);  x += FFN(AdaLN(x; shift2, scale2)) · gate2
// precision fp8 (the block's switches in WanBlockPolicy): the self-attention and the block linears as
// the fp8 kernels quantise, then fp32 math; norms, modulation, RoPE and the cross-attention in fp32.
#include "model/wan/dit/transformer.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/fp8.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "parallel/block_attention.h"

namespace vgen {
namespace {

// A linear of for_each_fp8_linear: the CPU emulation of its fp8 GEMM when this block runs them in
// fp8, with the e4m3 or INT8 weight of enable_fp8 (or, for a block staged by host DWDP, the same
// quantisation made now), else fp32. `idx`: the linear's WanFp8Linear index (fp8_config.bf16_linears
// keeps some in fp32).
Tensor block_apply(const WanLinear& l, const Tensor& x, WanFp8Linear idx, const WanBlockPolicy& p) {
  const Fp8Switches& sw = p.fp8;
  if (!sw.linear_in_fp8(idx)) return linear(x, l.w, l.b, p.rows);
  return fp8_linear_host(x, l.w8.defined() ? Fp8Weight{l.w8, l.w_scale} : fp8_quantize_weight(l.w, sw.gemm_format),
                         l.b);
}

}  // namespace

void wan_block_forward(const WanTransformerConfig& cfg, const WanBlockWeights& w, Tensor& x, const Tensor& tproj,
                       const Tensor& cos, const Tensor& sin, const Tensor& text_k, const Tensor& text_v,
                       const SeqLayout& layout, SeqAttention& attention, const WanBlockPolicy& policy) {
  const int64_t B = x.dim(0), S = x.dim(1), D = x.dim(2);
  const int64_t H = cfg.num_attention_heads, Dh = cfg.attention_head_dim;
  const float eps = float(cfg.eps);

  // [B, 6, D]: shift1, scale1, gate1, shift2, scale2, gate2
  Tensor mod = add_row(tproj.reshape({B, 6 * D}), w.scale_shift_table.reshape({6 * D})).reshape({B, 6, D});

  // Self-attention: QK RMSNorm over the full width, RoPE on the local shard, then the SeqAttention.
  {
    Tensor n = layer_norm_modulate(x, mod, 0, 1, eps);                                 // [B, S, D]
    Tensor q = rms_norm(block_apply(w.attn1.q, n, kLinSelfQ, policy), w.attn1.norm_q, eps).reshape({B, S, H, Dh});  // [B, S, H, Dh]
    Tensor k = rms_norm(block_apply(w.attn1.k, n, kLinSelfK, policy), w.attn1.norm_k, eps).reshape({B, S, H, Dh});  // [B, S, H, Dh]
    Tensor v = block_apply(w.attn1.v, n, kLinSelfV, policy).reshape({B, S, H, Dh});                                 // [B, S, H, Dh]
    rope_(q, cos, sin);
    rope_(k, cos, sin);
    Tensor o = attention.forward(q, k, v, layout, policy.self_attention());  // [B, S, H, Dh]
    Tensor a = block_apply(w.attn1.o, o.reshape({B, S, D}), kLinSelfO, policy);        // [B, S, D]
    gated_residual_(x, a, mod, 2);
  }
  // Cross-attention: local queries against every text position (no mask), plain residual add.
  {
    Tensor n = cfg.cross_attn_norm ? layer_norm(x, w.norm2_w, w.norm2_b, eps) : x;        // [B, S, D]
    Tensor q = rms_norm(block_apply(w.attn2.q, n, kLinCrossQ, policy), w.attn2.norm_q, eps).reshape({B, S, H, Dh});  // [B, S, H, Dh]
    Tensor o = Tensor::empty(q.shape(), DType::kF32);                                       // [B, S, H, Dh]
    block_attention(q, text_k, text_v, text_k.dim(1), o, nullptr, policy.cross_attention());
    Tensor a = block_apply(w.attn2.o, o.reshape({B, S, D}), kLinCrossO, policy);  // [B, S, D]
    add_inplace(x, a);
  }
  // Feed-forward (GELU-tanh), gated residual.
  {
    Tensor n = layer_norm_modulate(x, mod, 3, 4, eps);  // [B, S, D]
    Tensor h = block_apply(w.ffn1, n, kLinFfn1, policy);               // [B, S, ffn]
    gelu_tanh_(h);
    Tensor f = block_apply(w.ffn2, h, kLinFfn2, policy);  // [B, S, D]
    gated_residual_(x, f, mod, 5);
  }
}

}  // namespace vgen
