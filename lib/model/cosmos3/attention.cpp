#include "model/cosmos3/attention.h"

#include "ops/gqa/gqa_ops.h"  // gqa_attention
#include "parallel/block_attention.h"
#include "parallel/prefix_attention.h"

namespace vgen {

Tensor concat_tokens(const Tensor& a, const Tensor& b) {
  VGEN_ASSERT(a.ndim() >= 2 && a.ndim() == b.ndim() && a.dim(0) == 1 && b.dim(0) == 1 && a.dtype() == b.dtype() &&
                  a.device() == b.device() && a.numel() / a.dim(1) == b.numel() / b.dim(1),
              "concat_tokens: {} and {}", a.str(), b.str());
  Shape shape = a.shape();
  shape[1] = a.dim(1) + b.dim(1);
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());  // [1, Sa + Sb, ...]
  const int64_t row = a.numel() / a.dim(1);
  Tensor rows = out.reshape({shape[1], row});
  Tensor head = rows.narrow(0, a.dim(1)), tail = rows.narrow(a.dim(1), b.dim(1));
  head.copy_from(a);
  tail.copy_from(b);
  return out;
}

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && k.dim(1) == q.dim(1), "causal_attention: q {} k {}", q.str(), k.str());
  return gqa_attention(q, k, v, k.dim(1), /*causal=*/true);  // [1, L, H, Dh]
}

Tensor full_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionPolicy& policy) {
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && k.shape() == v.shape() && q.dim(2) % k.dim(2) == 0,
              "full_attention: q {} k {} v {}", q.str(), k.str(), v.str());
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device());  // [1, S, H, Dh]
  block_attention(q, k, v, k.dim(1), out, nullptr, policy);     // grouped heads expanded there
  return out;
}

Tensor joint_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& pk, const Tensor& pv,
                       const SeqLayout& layout, SeqAttention* attention, const AttentionPolicy& policy) {
  if (attention == nullptr) {
    VGEN_ASSERT(layout.degree == 1, "joint_attention: sequence-parallel degree {} without an attention", layout.degree);
    return full_attention(q, concat_tokens(pk, k), concat_tokens(pv, v), policy);  // [1, S, H, Dh]
  }
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && pk.ndim() == 4 && q.dim(2) % k.dim(2) == 0 && pk.dim(2) == k.dim(2),
              "joint_attention: q {} k {} prompt k {}", q.str(), k.str(), pk.str());
  // The K/V keep their KVH heads through the mesh's collectives; the innermost attention call
  // expands them (parallel/block_attention.h).
  const PrefixKv prompt{pk, pv};                                                   // [1, L, KVH, Dh]
  return seq_attention_with_prefix(*attention, q, k, v, prompt, layout, policy);  // [1, S_loc, H, Dh]
}

}  // namespace vgen
