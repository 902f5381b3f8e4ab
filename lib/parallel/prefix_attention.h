// Attention of sequence-sharded queries over [prefix | sequence]: a prefix of keys that every rank
// holds whole (e.g. a prompt's K/V ahead of the video tokens) joined before the sharded sequence's
// own keys. The prefix is one more key block whose partial result merges through the LSE, so no
// collective moves it: one rank (local), Ring, Attention2D and Ulysses (over either or alone).
#pragma once
#include "core/tensor.h"
#include "parallel/seq_attention.h"

namespace vgen {

// k, v [B, P, KVH, Dh], identical on every rank; every key is valid. KVH divides the queries' heads H
// (grouped K/V heads, as SeqAttention's k and v).
struct PrefixKv {
  Tensor k, v;
};

// q, k, v as SeqAttention::forward (q [B, S_loc, H, Dh], k/v [B, S_loc, KVH, Dh], pad keys excluded)
// → [B, S_loc, H, Dh]: softmax over the prefix keys and the sequence's real keys. kRecipe for an
// attention without a prefix path, before any collective.
Tensor seq_attention_with_prefix(SeqAttention& attention, const Tensor& q, const Tensor& k, const Tensor& v,
                                 const PrefixKv& prefix, const SeqLayout& layout, const AttentionPolicy& policy);

// Merges the attention of q [B, S, H, Dh] over the whole prefix into (out [B, S, H, Dh] f32,
// lse [B, H, S] f32), the result of q over other keys.
void merge_prefix_block(const Tensor& q, const PrefixKv& prefix, Tensor& out, Tensor& lse,
                        const AttentionPolicy& policy);

// Checks a prefix against the queries q [B, S_loc, H, Dh]: [B, P, KVH, Dh] with KVH | H, q's dtype and
// device.
void check_prefix(const Tensor& q, const PrefixKv& prefix, const char* who);

}  // namespace vgen
