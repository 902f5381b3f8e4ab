#include "ops/device_ops.h"

namespace vgen {

Tensor cast(const Tensor& t, DType dt) {
  if (t.dtype() == dt) return t;
  if (t.is_cpu()) return t.to(dt);
  return cuda_cast(t, dt);
}

#ifndef VGEN_WITH_CUDA
namespace {
[[noreturn]] void no_cuda(const char* op) {
  VGEN_THROW(ExitCode::kUsage, "{}: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu",
             op);
}
}  // namespace

Tensor cuda_cast(const Tensor&, DType) { no_cuda("cuda_cast"); }
Tensor cuda_linear(const Tensor&, const Tensor&, const Tensor&, DType, Activation) { no_cuda("cuda_linear"); }
void cuda_linear_add_(Tensor&, const Tensor&, const Tensor&, const Tensor&, float) { no_cuda("cuda_linear_add_"); }
void cuda_attention(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float) {
  no_cuda("cuda_attention");
}
void cuda_attention_merge(Tensor&, Tensor&, const Tensor&, const Tensor&) { no_cuda("cuda_attention_merge"); }
#endif

}  // namespace vgen
