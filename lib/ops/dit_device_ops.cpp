// CPU-only build: the device paths of the DiT ops throw (dit_device_ops_cuda.cpp has the real ones).
#include "ops/dit_device_ops.h"

#include "core/no_cuda_error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA

Tensor cuda_layer_norm(const Tensor&, const Tensor&, const Tensor&, float) { throw_no_cuda("layer_norm"); }
Tensor cuda_layer_norm_modulate(const Tensor&, const Tensor&, int, int, float) { throw_no_cuda("layer_norm_modulate"); }
Tensor cuda_residual_layer_norm(Tensor&, const Tensor&, const Tensor&, int, const Tensor&, const Tensor&, float) {
  throw_no_cuda("residual_layer_norm");
}
Tensor cuda_residual_layer_norm_modulate(Tensor&, const Tensor&, const Tensor&, int, const Tensor&, int, int, float) {
  throw_no_cuda("residual_layer_norm_modulate");
}
bool cuda_layer_norm_fp8(const Tensor&, const Tensor&, const Tensor&, float, Fp8Activation&, GemmFormat) {
  throw_no_cuda("layer_norm_fp8");
}
bool cuda_layer_norm_modulate_fp8(const Tensor&, const Tensor&, int, int, float, Fp8Activation&, GemmFormat) {
  throw_no_cuda("layer_norm_modulate_fp8");
}
bool cuda_residual_layer_norm_modulate_fp8(Tensor&, const Tensor&, const Tensor&, int, const Tensor&, int, int, float,
                                           Fp8Activation&, GemmFormat) {
  throw_no_cuda("residual_layer_norm_modulate_fp8");
}
Tensor cuda_rms_norm(const Tensor&, const Tensor&, float) { throw_no_cuda("rms_norm"); }
Tensor cuda_rms_norm_rope(const Tensor&, const Tensor&, const Tensor&, const Tensor&, float) {
  throw_no_cuda("rms_norm_rope");
}
void cuda_rope_(Tensor&, const Tensor&, const Tensor&) { throw_no_cuda("rope"); }
void cuda_add_inplace(Tensor&, const Tensor&) { throw_no_cuda("add_inplace"); }
Tensor cuda_sub(const Tensor&, const Tensor&) { throw_no_cuda("sub"); }
Tensor cuda_abs_diff_sums(const Tensor&, const Tensor&) { throw_no_cuda("abs_diff_sums"); }
Tensor cuda_add_row(const Tensor&, const Tensor&) { throw_no_cuda("add_row"); }
void cuda_gated_residual_(Tensor&, const Tensor&, const Tensor&, int) { throw_no_cuda("gated_residual_"); }
Tensor cuda_cfg_combine(const Tensor&, const Tensor&, float) { throw_no_cuda("cfg_combine"); }
Tensor cuda_scale_rows(const Tensor&, const Tensor&) { throw_no_cuda("scale_rows"); }
Tensor cuda_gelu_tanh(const Tensor&) { throw_no_cuda("gelu_tanh"); }
Tensor cuda_silu(const Tensor&) { throw_no_cuda("silu"); }
void cuda_gelu_tanh_(Tensor&) { throw_no_cuda("gelu_tanh_"); }
void cuda_silu_(Tensor&) { throw_no_cuda("silu_"); }
void cuda_gelu_erf_(Tensor&) { throw_no_cuda("gelu_erf_"); }
void cuda_quick_gelu_(Tensor&) { throw_no_cuda("quick_gelu_"); }
Tensor cuda_timestep_embedding(const Tensor&, int64_t, bool, float, float) { throw_no_cuda("timestep_embedding"); }
Tensor cuda_gather_rows(const Tensor&, const Tensor&) { throw_no_cuda("gather_rows"); }
Tensor cuda_patchify(const Tensor&, const std::array<int, 3>&, int64_t, int64_t, DType) { throw_no_cuda("patchify"); }
Tensor cuda_unpatchify(const Tensor&, const std::array<int, 3>&, int64_t, int64_t, int64_t, int64_t, DType) {
  throw_no_cuda("unpatchify");
}
void cuda_fill_normal(Tensor&, uint64_t, float, float) { throw_no_cuda("fill_normal"); }
void cuda_fill_constant(Tensor&, float) { throw_no_cuda("fill_constant"); }
#endif

}  // namespace vgen
