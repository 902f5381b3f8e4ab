// CPU-only build: the device paths of the DiT ops throw (dit_device_ops_cuda.cpp has the real ones).
#include "ops/dit_device_ops.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
namespace {
[[noreturn]] void no_cuda(const char* op) {
  VGEN_THROW(ExitCode::kUsage, "{}: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu",
             op);
}
}  // namespace

Tensor cuda_layer_norm(const Tensor&, const Tensor&, const Tensor&, float) { no_cuda("layer_norm"); }
Tensor cuda_layer_norm_modulate(const Tensor&, const Tensor&, int, int, float) { no_cuda("layer_norm_modulate"); }
Tensor cuda_residual_layer_norm(Tensor&, const Tensor&, const Tensor&, int, const Tensor&, const Tensor&, float) {
  no_cuda("residual_layer_norm");
}
Tensor cuda_residual_layer_norm_modulate(Tensor&, const Tensor&, const Tensor&, int, const Tensor&, int, int, float) {
  no_cuda("residual_layer_norm_modulate");
}
Tensor cuda_rms_norm(const Tensor&, const Tensor&, float) { no_cuda("rms_norm"); }
Tensor cuda_rms_norm_rope(const Tensor&, const Tensor&, const Tensor&, const Tensor&, float) {
  no_cuda("rms_norm_rope");
}
void cuda_rope_(Tensor&, const Tensor&, const Tensor&) { no_cuda("rope"); }
void cuda_add_inplace(Tensor&, const Tensor&) { no_cuda("add_inplace"); }
Tensor cuda_sub(const Tensor&, const Tensor&) { no_cuda("sub"); }
Tensor cuda_abs_diff_sums(const Tensor&, const Tensor&) { no_cuda("abs_diff_sums"); }
Tensor cuda_add_row(const Tensor&, const Tensor&) { no_cuda("add_row"); }
void cuda_gated_residual_(Tensor&, const Tensor&, const Tensor&, int) { no_cuda("gated_residual_"); }
Tensor cuda_cfg_combine(const Tensor&, const Tensor&, float) { no_cuda("cfg_combine"); }
Tensor cuda_scale_rows(const Tensor&, const Tensor&) { no_cuda("scale_rows"); }
Tensor cuda_gelu_tanh(const Tensor&) { no_cuda("gelu_tanh"); }
Tensor cuda_silu(const Tensor&) { no_cuda("silu"); }
void cuda_gelu_tanh_(Tensor&) { no_cuda("gelu_tanh_"); }
void cuda_silu_(Tensor&) { no_cuda("silu_"); }
Tensor cuda_timestep_embedding(const Tensor&, int64_t, bool, float, float) { no_cuda("timestep_embedding"); }
Tensor cuda_patchify(const Tensor&, const std::array<int, 3>&, int64_t, int64_t, DType) { no_cuda("patchify"); }
Tensor cuda_unpatchify(const Tensor&, const std::array<int, 3>&, int64_t, int64_t, int64_t, int64_t, DType) {
  no_cuda("unpatchify");
}
void cuda_fill_normal(Tensor&, uint64_t, float, float) { no_cuda("fill_normal"); }
void cuda_fill_constant(Tensor&, float) { no_cuda("fill_constant"); }
#endif

}  // namespace vgen
