// Device paths of the GQA ops (contracts in gqa_ops.h); CUDA builds only.
#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/gqa/gqa_attention.cuh"
#include "kernels/gqa/repeat_kv.cuh"
#include "ops/device_op_checks.h"
#include "ops/gqa/gqa_device_ops.h"

namespace vgen {

using namespace device_ops;

Tensor cuda_repeat_kv_heads(const Tensor& kv, int64_t groups) {
  const kern::FloatType t = act_type(kv, "repeat_kv_heads", "kv");
  VGEN_ASSERT(kv.ndim() == 4 && groups >= 1, "repeat_kv_heads: kv {} must be [B, S, KVH, D], groups {}", kv.str(),
              groups);
  Tensor out = Tensor::empty({kv.dim(0), kv.dim(1), kv.dim(2) * groups, kv.dim(3)}, kv.dtype(),
                             Device::kCUDA);  // [B, S, H, D]
  launched(kern::repeat_kv(kv.raw(), out.raw(), t, kv.dim(0) * kv.dim(1), kv.dim(2), groups, kv.dim(3),
                           compute_stream()),
           "repeat_kv_heads", kv);
  return out;
}

Tensor cuda_gqa_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, bool causal,
                          int64_t causal_offset, float scale) {
  const kern::FloatType t = act_type(q, "gqa_attention", "q");
  VGEN_ASSERT(act_type(k, "gqa_attention", "k") == t && act_type(v, "gqa_attention", "v") == t,
              "gqa_attention: q {} k {} v {} must share one dtype", q.str(), k.str(), v.str());
  VGEN_ASSERT(q.dim(3) <= kern::kGqaAttnMaxHeadDim, "gqa_attention: head dim {} above {}", q.dim(3),
              kern::kGqaAttnMaxHeadDim);
  Tensor out = Tensor::empty(q.shape(), q.dtype(), Device::kCUDA);  // [B, Sq, H, D]
  launched(kern::gqa_attention(q.raw(), k.raw(), v.raw(), out.raw(), t, q.dim(0), q.dim(1), k.dim(1), q.dim(2),
                               k.dim(2), q.dim(3), num_valid_kv, causal, causal_offset, scale, compute_stream()),
           "gqa_attention", q);
  return out;
}

}  // namespace vgen
