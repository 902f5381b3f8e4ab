// CPU-only build: the device paths of the T5 ops throw (t5_device_ops_cuda.cpp has the real ones).
#include "ops/t5_device_ops.h"

#include "core/no_cuda_error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
Tensor cuda_t5_rms_norm(const Tensor&, const Tensor&, float) { throw_no_cuda("t5_rms_norm"); }
Tensor cuda_t5_gated_act(const Tensor&, const Tensor&, kern::T5Act) { throw_no_cuda("t5_gated_act"); }
Tensor cuda_t5_relative_bias(const Tensor&, const Tensor&) { throw_no_cuda("t5_relative_bias"); }
Tensor cuda_t5_attention(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t) {
  throw_no_cuda("t5_attention");
}
void cuda_t5_attention_out(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, Tensor&) {
  throw_no_cuda("t5_attention");
}
Tensor cuda_embedding(const Tensor&, const Tensor&) { throw_no_cuda("embedding"); }
#endif

}  // namespace vgen
