// Weights of the Wan DiT (wan_spec.md §1.2) in the compute dtype (f32 on the CPU path): loaded from
// a WeightStore with every shape checked against the config. f32 files stay zero-copy mmap views;
// bf16/f16 tensors are converted once at load.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "io/safetensors.h"
#include "model/wan/dit/transformer_config.h"
#include "ops/linear_layer.h"

namespace vgen {

// A linear layer: w [out, in], b [out]; precision fp8 (WanTransformer::enable_fp8), the blocks'
// linears only: w8 / w_scale, w quantised per output channel (ops/linear_layer.h).
using WanLinear = LinearWeights;

struct WanAttentionWeights {
  WanLinear q, k, v, o;
  Tensor norm_q, norm_k;  // [D] RMSNorm weights over the full width
};

// The cross-attention's image keys/values (the image path; undefined without it): add_k_proj,
// add_v_proj [D, D] read the image embedder's tokens, norm_added_k [D] is an RMSNorm of the keys.
struct WanImageKvWeights {
  WanLinear k, v;
  Tensor norm_k;
};

struct WanBlockWeights {
  Tensor scale_shift_table;  // [6, D]: shift1, scale1, gate1, shift2, scale2, gate2
  WanAttentionWeights attn1;  // self-attention
  WanAttentionWeights attn2;  // cross-attention (k/v read the projected text)
  Tensor norm2_w, norm2_b;    // [D] affine LayerNorm before cross-attention (undefined without cross_attn_norm)
  WanLinear ffn1, ffn2;       // [ffn, D], [D, ffn]
  WanImageKvWeights image;    // attn2's image K/V projections (the image path only)
};

// The linears of a block that precision fp8 runs in e4m3 (self-attention q/k/v/o, cross-attention
// q/o, ffn1, ffn2); the cross-attention's text K/V projections stay bf16 (computed once per prompt).
// f(linear) or f(linear, index), the index into kWanFp8LinearNames.
template <typename F> void for_each_fp8_linear(WanBlockWeights& b, F&& f) {
  int i = 0;
  for (WanLinear* l : {&b.attn1.q, &b.attn1.k, &b.attn1.v, &b.attn1.o, &b.attn2.q, &b.attn2.o, &b.ffn1, &b.ffn2}) {
    if constexpr (std::is_invocable_v<F&, WanLinear&, int>) f(*l, i++);
    else f(*l);
  }
}
// Their indices in that order (the bits of fp8_config.bf16_linears' mask).
enum WanFp8Linear : int { kLinSelfQ, kLinSelfK, kLinSelfV, kLinSelfO, kLinCrossQ, kLinCrossO, kLinFfn1, kLinFfn2 };
// The same linears by their module names in a Diffusers checkpoint (blocks.N.<name>.weight), in
// for_each_fp8_linear's order: the vocabulary of fp8_config.bf16_linears.
inline constexpr const char* kWanFp8LinearNames[8] = {"attn1.to_q",     "attn1.to_k",     "attn1.to_v",
                                                      "attn1.to_out.0", "attn2.to_q",     "attn2.to_out.0",
                                                      "ffn.net.0.proj", "ffn.net.2"};
// fp8_config.bf16_linears → a mask (bit i: kWanFp8LinearNames[i] in bf16); an unknown name is a
// recipe error naming fp8_config.bf16_linears[j] and the names it takes.
uint8_t wan_fp8_linear_mask(const std::vector<std::string>& names);

// Calls f(Tensor&) on every tensor slot of a block in one fixed order (undefined ones included:
// norm2 without cross_attn_norm).
template <typename F> void for_each_block_tensor(WanBlockWeights& b, F&& f) {
  f(b.scale_shift_table);
  for (WanAttentionWeights* a : {&b.attn1, &b.attn2}) {
    for (WanLinear* l : {&a->q, &a->k, &a->v, &a->o}) {
      f(l->w);
      f(l->b);
    }
    f(a->norm_q);
    f(a->norm_k);
  }
  f(b.norm2_w);
  f(b.norm2_b);
  for (WanLinear* l : {&b.ffn1, &b.ffn2, &b.image.k, &b.image.v}) {
    f(l->w);
    f(l->b);
  }
  f(b.image.norm_k);
}

// WanImageEmbedding (the image path): CLIP tokens [L_img, image_dim] (+ pos_embed for FLF2V) →
// LayerNorm (eps 1e-5, fp32) → Linear → GELU (erf) → Linear → LayerNorm (eps 1e-5, fp32) → [L_img, D].
struct WanImageEmbedderWeights {
  Tensor norm1_w, norm1_b;  // [image_dim]
  WanLinear ff1, ff2;       // [image_dim, image_dim], [D, image_dim]
  Tensor norm2_w, norm2_b;  // [D]
  Tensor pos_embed;         // [pos_embed_seq_len, image_dim] (FLF2V only)
};

struct WanTransformerWeights {
  WanLinear patch_embedding;  // w viewed as [D, C_in·pt·ph·pw] (Conv3d with kernel = stride = patch)
  WanLinear time_linear_1, time_linear_2;  // [D, freq_dim], [D, D]
  WanLinear time_proj;                     // [6D, D]
  WanLinear text_linear_1, text_linear_2;  // [D, text_dim], [D, D]
  WanImageEmbedderWeights image_embedder;  // the image path only
  Tensor scale_shift_table;                // [2, D]: shift, scale of the head
  WanLinear proj_out;                      // [pt·ph·pw·C_out, D]
  std::vector<WanBlockWeights> blocks;

  size_t bytes = 0;            // bytes of the tensors as held (f32)
  size_t converted_bytes = 0;  // of which were converted from bf16/f16 into owned memory
};

// Throws kModel naming the tensor and both shapes on a mismatch, and naming the tensor when missing.
WanTransformerWeights load_wan_transformer_weights(const WeightStore& store, const WanTransformerConfig& cfg);
// The same checks on the headers alone (names, shapes, dtypes), reading no tensor data: the
// preflight's, so that every rank refuses a checkpoint before the load.
void check_wan_transformer_weights(const WeightStore& store, const WanTransformerConfig& cfg);

}  // namespace vgen
