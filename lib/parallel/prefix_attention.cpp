#include "parallel/prefix_attention.h"

#include <algorithm>

#include "parallel/block_attention.h"
#include "parallel/local_attention.h"
#include "parallel/ulysses.h"  // check_seq_inputs

namespace vgen {

// Degree 1: the sequence block (pad keys excluded), then the prefix block merged in.
Tensor LocalAttention::forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                                        const SeqLayout& layout, const AttentionPolicy& policy) {
  VGEN_ASSERT(layout.degree == 1, "local attention with a prefix at sequence-parallel degree {}", layout.degree);
  check_seq_inputs(q, k, v, layout, "local attention with a prefix");
  const int64_t B = q.dim(0), S = q.dim(1), H = q.dim(2);
  Tensor out = Tensor::empty(q.shape(), DType::kF32, q.device());  // [B, S, H, Dh]
  Tensor lse = Tensor::empty({B, H, S}, DType::kF32, q.device());  // [B, H, S]
  block_attention(q, k, v, std::min(layout.tokens, S), out, &lse, policy);
  merge_prefix_block(q, prefix, out, lse, policy);
  return out;
}

Tensor SeqAttention::forward_prefixed(const Tensor&, const Tensor&, const Tensor&, const PrefixKv&, const SeqLayout&,
                                      const AttentionPolicy&) {
  VGEN_THROW(ExitCode::kRecipe,
             "attention over a prefix K/V (a prompt ahead of the sequence) is implemented for the local, Ulysses, "
             "Ring and Attention2D attentions, not for this one");
}

void check_prefix(const Tensor& q, const PrefixKv& prefix, const char* who) {
  const Tensor& pk = prefix.k;
  VGEN_ASSERT(pk.defined() && prefix.v.defined() && pk.ndim() == 4 && prefix.v.shape() == pk.shape() &&
                  pk.dim(0) == q.dim(0) && pk.dim(3) == q.dim(3) && pk.dim(1) >= 1 &&
                  pk.dtype() == q.dtype() && pk.device() == q.device() && prefix.v.dtype() == q.dtype(),
              "{}: prefix k {} v {} for q {}", who, pk.defined() ? pk.str() : std::string("undefined"),
              prefix.v.defined() ? prefix.v.str() : std::string("undefined"), q.str());
  kv_head_groups(q, pk, who);
}

void merge_prefix_block(const Tensor& q, const PrefixKv& prefix, Tensor& out, Tensor& lse,
                        const AttentionPolicy& policy) {
  check_prefix(q, prefix, "prefix block");
  Tensor o2 = Tensor::empty(out.shape(), DType::kF32, q.device());   // [B, S, H, Dh]
  Tensor lse2 = Tensor::empty(lse.shape(), DType::kF32, q.device());  // [B, H, S]
  block_attention(q, prefix.k, prefix.v, prefix.k.dim(1), o2, &lse2, policy);
  block_attention_merge(out, lse, o2, lse2);
}

Tensor seq_attention_with_prefix(SeqAttention& attention, const Tensor& q, const Tensor& k, const Tensor& v,
                                 const PrefixKv& prefix, const SeqLayout& layout, const AttentionPolicy& policy) {
  check_prefix(q, prefix, "sequence attention");
  return attention.forward_prefixed(q, k, v, prefix, layout, policy);
}

}  // namespace vgen
