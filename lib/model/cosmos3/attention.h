// The attention of Cosmos 3's towers over lib/parallel's block attention: grouped K/V heads, the
// understanding tower's causal self-attention, and the generation tower's full attention over
// [prompt K/V | video K/V].
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "parallel/seq_attention.h"

namespace vgen {

// kv [1, S, KVH, Dh] → [1, S, KVH·groups, Dh], head h reading KV head h / groups (torch's enable_gqa).
// Host tensors only: the device path will attend grouped heads in the kernel instead of copying.
Tensor repeat_kv_heads(const Tensor& kv, int64_t groups);

// a [1, Sa, ...], b [1, Sb, ...] (same trailing shape, dtype and device) → [1, Sa + Sb, ...].
Tensor concat_tokens(const Tensor& a, const Tensor& b);

// Causal self-attention: q [1, L, H, Dh], k/v [1, L, KVH, Dh] → [1, L, H, Dh]; query i sees keys 0..i.
Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionPolicy& policy);

// Full attention: q [1, S, H, Dh], k/v [1, Skv, KVH, Dh] → [1, S, H, Dh].
Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionPolicy& policy);

}  // namespace vgen
