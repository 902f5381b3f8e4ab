// CPU-only build: the device paths of the GQA ops throw (gqa_device_ops_cuda.cpp has the real ones).
#include "ops/gqa/gqa_device_ops.h"

#include "core/no_cuda_error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
Tensor cuda_repeat_kv_heads(const Tensor&, int64_t) { throw_no_cuda("repeat_kv_heads"); }
Tensor cuda_gqa_attention(const Tensor&, const Tensor&, const Tensor&, int64_t, bool, int64_t, float) {
  throw_no_cuda("gqa_attention");
}
#endif

}  // namespace vgen
