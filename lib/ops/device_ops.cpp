#include "ops/device_ops.h"

#include "core/no_cuda_error.h"

namespace vgen {

Tensor cast(const Tensor& t, DType dt) {
  if (t.dtype() == dt) return t;
  if (t.is_cpu()) return t.to(dt);
  return cuda_cast(t, dt);
}

#ifndef VGEN_WITH_CUDA

Tensor cuda_cast(const Tensor&, DType) { throw_no_cuda("cuda_cast"); }
Tensor cuda_linear(const Tensor&, const Tensor&, const Tensor&, DType, Activation) { throw_no_cuda("cuda_linear"); }
void cuda_linear_add_(Tensor&, const Tensor&, const Tensor&, const Tensor&, float) { throw_no_cuda("cuda_linear_add_"); }
void cuda_attention(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float) {
  throw_no_cuda("cuda_attention");
}
void cuda_attention_merge(Tensor&, Tensor&, const Tensor&, const Tensor&) { throw_no_cuda("cuda_attention_merge"); }
#endif

}  // namespace vgen
