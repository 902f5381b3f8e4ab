#include "ops/gqa/gqa_ops.h"

#include <cmath>

#include "kernels/gqa/gqa_attention_ref.h"
#include "kernels/gqa/repeat_kv_ref.h"
#include "ops/check.h"
#include "ops/gqa/gqa_device_ops.h"

namespace vgen {

Tensor repeat_kv_heads(const Tensor& kv, int64_t groups) {
  VGEN_ASSERT(kv.defined() && kv.ndim() == 4 && groups >= 1, "repeat_kv_heads: kv {} must be [B, S, KVH, D], groups {}",
              kv.defined() ? kv.str() : std::string("undefined"), groups);
  if (groups == 1) return kv;
  if (!kv.is_cpu()) return cuda_repeat_kv_heads(kv, groups);
  check_cpu_f32(kv, "repeat_kv_heads", "kv");
  Tensor out = Tensor::empty({kv.dim(0), kv.dim(1), kv.dim(2) * groups, kv.dim(3)}, DType::kF32);  // [B, S, H, D]
  kern::repeat_kv_ref(kv.f32(), out.f32(), kv.dim(0) * kv.dim(1), kv.dim(2), groups, kv.dim(3));
  return out;
}

Tensor gqa_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, bool causal,
                     int64_t causal_offset) {
  VGEN_ASSERT(q.defined() && k.defined() && v.defined() && q.ndim() == 4 && k.ndim() == 4 && k.shape() == v.shape() &&
                  k.dim(0) == q.dim(0) && k.dim(3) == q.dim(3) && k.dim(2) >= 1 && q.dim(2) % k.dim(2) == 0,
              "gqa_attention: q {} [B, Sq, H, D], k {} and v {} [B, Skv, KVH, D] with KVH dividing H",
              q.defined() ? q.str() : "undefined", k.defined() ? k.str() : "undefined",
              v.defined() ? v.str() : "undefined");
  const float scale = float(1.0 / std::sqrt(double(q.dim(3))));
  if (!q.is_cpu()) return cuda_gqa_attention(q, k, v, num_valid_kv, causal, causal_offset, scale);
  for (const Tensor* t : {&q, &k, &v}) check_cpu_f32(*t, "gqa_attention", "q, k and v");
  Tensor out = Tensor::empty(q.shape(), DType::kF32);  // [B, Sq, H, D]
  kern::gqa_attention_ref(q.f32(), k.f32(), v.f32(), out.f32(), q.dim(0), q.dim(1), k.dim(1), q.dim(2), k.dim(2),
                          q.dim(3), num_valid_kv, causal, causal_offset, scale);
  return out;
}

}  // namespace vgen
