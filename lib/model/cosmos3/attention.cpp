#include "model/cosmos3/attention.h"

#include <cstring>

#include "parallel/block_attention.h"

namespace vgen {
namespace {

// K/V with as many heads as q (a copy only when the heads are grouped).
Tensor heads_like(const Tensor& q, const Tensor& kv) {
  VGEN_ASSERT(q.ndim() == 4 && kv.ndim() == 4 && q.dim(0) == 1 && kv.dim(0) == 1 && q.dim(3) == kv.dim(3) &&
                  q.dim(2) % kv.dim(2) == 0,
              "cosmos3 attention: q {} kv {}", q.str(), kv.str());
  return kv.dim(2) == q.dim(2) ? kv : repeat_kv_heads(kv, q.dim(2) / kv.dim(2));
}

}  // namespace

Tensor repeat_kv_heads(const Tensor& kv, int64_t groups) {
  VGEN_CHECK(kv.is_cpu(), ExitCode::kInternal,
             "cosmos3 attention: grouped K/V heads on {} need the grouped-head attention kernels (not wired yet)",
             device_name(kv.device()));
  VGEN_ASSERT(kv.ndim() == 4 && groups >= 1, "repeat_kv_heads: kv {} groups {}", kv.str(), groups);
  const int64_t S = kv.dim(1), KVH = kv.dim(2), row = kv.dim(3) * int64_t(dtype_size(kv.dtype()));
  Tensor out = Tensor::empty({1, S, KVH * groups, kv.dim(3)}, kv.dtype());  // [1, S, H, Dh]
  const char* src = static_cast<const char*>(kv.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t s = 0; s < S; ++s)
    for (int64_t h = 0; h < KVH * groups; ++h)
      std::memcpy(dst + (s * KVH * groups + h) * row, src + (s * KVH + h / groups) * row, size_t(row));
  return out;
}

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

Tensor causal_attention(const Tensor& q, const Tensor& k0, const Tensor& v0, const AttentionPolicy& policy) {
  const Tensor k = heads_like(q, k0), v = heads_like(q, v0);
  const int64_t L = q.dim(1), H = q.dim(2), Dh = q.dim(3);
  VGEN_ASSERT(k.dim(1) == L, "causal_attention: q {} k {}", q.str(), k.str());
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device());  // [1, L, H, Dh]
  const Tensor q_rows = q.reshape({L, H * Dh});
  Tensor out_rows = out.reshape({L, H * Dh});
  // One query row at a time over its valid prefix of keys: exact causal masking with the block
  // attention's valid-key count (prompts are short; a causal kernel replaces this on the device).
  for (int64_t i = 0; i < L; ++i) {
    const Tensor qi = q_rows.narrow(i, 1).reshape({1, 1, H, Dh});
    Tensor oi = out_rows.narrow(i, 1).reshape({1, 1, H, Dh});
    block_attention(qi, k, v, i + 1, oi, nullptr, policy);
  }
  return out;
}

Tensor full_attention(const Tensor& q, const Tensor& k0, const Tensor& v0, const AttentionPolicy& policy) {
  const Tensor k = heads_like(q, k0), v = heads_like(q, v0);
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device());  // [1, S, H, Dh]
  block_attention(q, k, v, k.dim(1), out, nullptr, policy);
  return out;
}

}  // namespace vgen
