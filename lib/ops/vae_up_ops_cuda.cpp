// The device side of ops/vae_up_ops.h: channels-last activations, kernels/vae_up/vae_up.cuh on
// compute_stream().
#include "core/cuda_stream.h"
#include "kernels/vae_up/vae_up.cuh"
#include "ops/device_op_checks.h"
#include "ops/vae_up_ops.h"

namespace vgen {

using namespace device_ops;

void cuda_vae_dup_up_add_(Tensor& y, const Tensor& x, int64_t cout, int64_t factor_t, int64_t factor_s,
                          int64_t phase) {
  const kern::FloatType t = act_type(y, "vae_dup_up_add_", "output");
  VGEN_ASSERT(act_type(x, "vae_dup_up_add_", "input") == t && x.ndim() == 4 && y.ndim() == 4 &&
                  y.dim(0) == x.dim(0) && y.dim(1) == factor_s * x.dim(1) && y.dim(2) == factor_s * x.dim(2) &&
                  y.dim(3) >= cout,
              "vae_dup_up_add_: input {} onto {} channels (factor_s {}) into {}", x.str(), cout, factor_s, y.str());
  launched(kern::vae_dup_up_add(y.raw(), x.raw(), t, x.dim(0), x.dim(1), x.dim(2), x.dim(3), cout, y.dim(3), factor_t,
                                factor_s, phase, compute_stream()),
           "vae_dup_up_add_", y);
}

Tensor cuda_vae_subpixel_shuffle_dup_up(const Tensor& r, int64_t C, const Tensor& x, int64_t factor_t,
                                        int64_t phase) {
  const kern::FloatType t = act_type(r, "vae_subpixel_shuffle_dup_up", "input");
  VGEN_ASSERT(act_type(x, "vae_subpixel_shuffle_dup_up", "shortcut") == t && r.ndim() == 4 && x.ndim() == 4 &&
                  r.dim(0) == x.dim(0) && r.dim(1) == x.dim(1) + 1 && r.dim(2) == x.dim(2) + 1 && r.dim(3) >= 4 * C,
              "vae_subpixel_shuffle_dup_up: input {} into {} channels with shortcut {}", r.str(), C, x.str());
  const int64_t T = x.dim(0), H = x.dim(1), W = x.dim(2);
  Tensor y = Tensor::empty({T, 2 * H, 2 * W, C}, r.dtype(), Device::kCUDA);  // [t, 2H, 2W, C]
  launched(kern::vae_shuffle_dup_up(r.raw(), x.raw(), y.raw(), t, T, H, W, r.dim(3), C, x.dim(3), factor_t, phase,
                                    compute_stream()),
           "vae_subpixel_shuffle_dup_up", r);
  return y;
}

void cuda_vae_write_frames_unpatchify(const Tensor& x, int64_t C, int64_t p, float lo, float hi, Tensor& video,
                                      int64_t f0) {
  const kern::FloatType t = act_type(x, "vae_write_frames_unpatchify", "input");
  check_dev(video, "vae_write_frames_unpatchify", "video");
  VGEN_ASSERT(x.ndim() == 4 && video.ndim() == 4 && video.dtype() == DType::kF32 && video.dim(0) == C && p >= 1 &&
                  C * p * p <= x.dim(3) && video.dim(2) == p * x.dim(1) && video.dim(3) == p * x.dim(2) && f0 >= 0 &&
                  f0 + x.dim(0) <= video.dim(1),
              "vae_write_frames_unpatchify: frames {} (patch {}, {} channels) at {} into video {}", x.str(), p, C, f0,
              video.str());
  const int64_t plane = video.dim(2) * video.dim(3);
  launched(kern::vae_unpatchify_to_channels_first(x.raw(), t, video.f32() + f0 * plane, x.dim(0), x.dim(1), x.dim(2),
                                                  x.dim(3), C, p, video.dim(1) * plane, lo, hi, compute_stream()),
           "vae_write_frames_unpatchify", x);
}

}  // namespace vgen
