// CPU-only build: the device ops of the VAE throw (vae_device_ops_cuda.cpp has the real ones).
#include "ops/vae_device_ops.h"

#include "core/no_cuda_error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA

VaeConvCounts vae_conv_counts() { return {}; }
Tensor cuda_vae_conv3d(const Tensor&, const Tensor&, const Tensor&, const kern::Conv3dPad&, const VaeConvPolicy&,
                       const Tensor*) {
  throw_no_cuda("vae_conv3d");
}
void cuda_vae_rms_norm(const Tensor&, const Tensor&, bool, Tensor&) { throw_no_cuda("vae_rms_norm"); }
Tensor cuda_vae_time_interleave2(const Tensor&) { throw_no_cuda("vae_time_interleave2"); }
void cuda_vae_conv_weight_layout(const Tensor&, Tensor&) { throw_no_cuda("vae_conv_weight_layout"); }
void cuda_vae_add_(Tensor&, const Tensor&) { throw_no_cuda("vae_add_"); }
void cuda_vae_clamp_(Tensor&, float, float) { throw_no_cuda("vae_clamp_"); }
void cuda_vae_write_frames(const Tensor&, int64_t, float, float, Tensor&, int64_t) { throw_no_cuda("vae_write_frames"); }
Tensor cuda_vae_frame_attention(const Tensor&, const Tensor&, int64_t) { throw_no_cuda("vae_frame_attention"); }
void cuda_copy_2d(void*, size_t, const void*, size_t, size_t, size_t) { throw_no_cuda("copy_2d"); }
void cuda_zero_2d(void*, size_t, size_t, size_t) { throw_no_cuda("zero_2d"); }
#endif

}  // namespace vgen
