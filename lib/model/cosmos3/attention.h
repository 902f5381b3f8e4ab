// The attention of Cosmos 3's towers: the understanding tower's causal self-attention over the
// prompt and the generation tower's full attention over [prompt K/V | video K/V], both with grouped
// K/V heads (ops/gqa).
#pragma once
#include "core/tensor.h"
#include "parallel/seq_attention.h"

namespace vgen {

// a [1, Sa, ...], b [1, Sb, ...] (same trailing shape, dtype and device) → [1, Sa + Sb, ...].
Tensor concat_tokens(const Tensor& a, const Tensor& b);

// Causal self-attention: q [1, L, H, Dh], k/v [1, L, KVH, Dh] → [1, L, H, Dh]; query i sees keys 0..i.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v);

// Full attention: q [1, S, H, Dh], k/v [1, Skv, KVH, Dh] → [1, S, H, Dh], through the block
// attention of lib/parallel (the kernels of the DiT's long sequences; it expands the K/V heads).
Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionPolicy& policy);

// The generation tower's attention over [prompt K/V | video K/V]. q [1, S_loc, H, Dh], k/v
// [1, S_loc, KVH, Dh] (this rank's video tokens of `layout`), pk/pv [1, L, KVH, Dh] (the prompt's,
// on every rank) → [1, S_loc, H, Dh]. attention null (one rank): one block over the concatenation;
// else the video K/V through the sequence-parallel attention with the prompt as its prefix
// (parallel/prefix_attention.h), the K/V with their KVH heads through every collective.
Tensor joint_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& pk, const Tensor& pv,
                       const SeqLayout& layout, SeqAttention* attention, const AttentionPolicy& policy);

}  // namespace vgen
