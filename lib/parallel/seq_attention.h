// Self-attention over the sequence-parallel group (Ulysses, Ring, Attention2D or local).
// Inputs are this rank's contiguous token shard; tokens are padded at the global tail to a
// multiple of the sequence-parallel degree, and pad keys are excluded exactly.
#pragma once
#include <cstdint>
#include <memory>

#include "config/attention_config.h"
#include "config/fp8_config.h"
#include "core/tensor.h"

namespace vgen {

// Token layout of one sequence-parallel rank (docs/architecture.md "One denoising step": seq_rank = cp_rank·U + u).
struct SeqLayout {
  int64_t tokens = 0;  // real tokens S
  int64_t padded = 0;  // S rounded up to a multiple of degree
  int degree = 1;      // SP = cp·U
  int seq_rank = 0;
  int64_t local() const { return padded / degree; }
  int64_t begin() const { return int64_t(seq_rank) * local(); }
  int64_t end() const { return begin() + local(); }
  static SeqLayout make(int64_t tokens, int degree, int seq_rank) {
    SeqLayout l;
    l.tokens = tokens;
    l.degree = degree;
    l.seq_rank = seq_rank;
    l.padded = (tokens + degree - 1) / degree * degree;
    return l;
  }
};

// How one attention call computes, passed down with every call (no process or thread state): the
// device kernels' backend (attention_config.backend), how its cuDNN calls cut the keys and, for a
// self-attention under precision fp8, the FP8 kernel with its Q·Kᵀ format. The host runs the fp32
// reference (fp8: its emulation).
struct AttentionPolicy {
  AttentionBackend backend = AttentionBackend::kAuto;
  AttentionKeySplit key_split;
  bool fp8 = false;
  QkFormat qk = QkFormat::kE4m3;
};

struct PrefixKv;  // parallel/prefix_attention.h

class SeqAttention {
 public:
  virtual ~SeqAttention() = default;
  // q: [B, S_loc, H, Dh], k, v: [B, S_loc, KVH, Dh], this rank's tokens with all heads; KVH divides H
  // (grouped K/V heads: query head h reads K/V head h / (H / KVH); they move through the collectives
  // with KVH heads and are expanded at the innermost attention call). Returns [B, S_loc, H, Dh].
  // Keys whose global token index is >= layout.tokens are padding and get zero weight.
  virtual Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                         const AttentionPolicy& policy) = 0;
  // As forward over [prefix | sequence]: a prefix K/V that every rank holds whole joined before the
  // sequence's keys (parallel/prefix_attention.h; called through seq_attention_with_prefix, which
  // checks the prefix). The default: kRecipe, for an attention without a prefix path (before any
  // collective).
  virtual Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                                  const SeqLayout& layout, const AttentionPolicy& policy);
};

}  // namespace vgen
