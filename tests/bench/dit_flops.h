// FLOP count of one Wan DiT forward for vgen_dit_bench (tests/bench/dit_bench.cpp): GEMMs, self- and
// cross-attention of a config at S video tokens, L text tokens and Li image tokens.
#pragma once
#include "model/wan/dit/transformer_config.h"

namespace vgen {

// FLOPs of one whole forward (multiply-add = 2) for S video tokens, L text tokens and Li image
// tokens (the image path); the callers divide by the ranks that share it.
struct Flops {
  double gemm = 0, self_attn = 0, cross_attn = 0;
  double total() const { return gemm + self_attn + cross_attn; }
};
inline Flops count_flops(const WanTransformerConfig& c, double S, double L, double Li) {
  const double D = c.dim(), F = c.ffn_dim, H = c.num_attention_heads, Dh = c.attention_head_dim, n = c.num_layers;
  Flops f;
  f.gemm = n * 2.0 * S * (4 * D * D + 2 * D * D + 2 * D * F)  // self q,k,v,o; cross q,o; ffn
           + n * 2.0 * L * 2 * D * D                          // cross k,v of the text
           + 2.0 * L * (double(c.text_dim) * D + D * D)        // text embedder
           + 2.0 * S * D * double(c.in_channels + c.out_channels) * c.patch_volume();  // patch embed, proj_out
  if (c.has_image()) {
    const double I = *c.image_dim;
    f.gemm += n * 2.0 * Li * 2 * D * D              // image k,v
              + 2.0 * Li * (I * I + I * D);         // image embedder (GELU MLP I -> I -> D)
  }
  f.self_attn = n * 4.0 * S * S * Dh * H;
  f.cross_attn = n * 4.0 * S * (L + (c.has_image() ? Li : 0.0)) * Dh * H;
  return f;
}

}  // namespace vgen
