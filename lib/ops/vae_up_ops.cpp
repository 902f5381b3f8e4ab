#include "ops/vae_up_ops.h"

#include "core/no_cuda_error.h"
#include "kernels/vae_up/vae_up_ref.h"
#include "ops/vae_subpixel_ops.h"

namespace vgen {

namespace {
void check_host(const Tensor& t, const char* op, const char* what) {
  VGEN_CHECK(t.defined() && t.is_cpu() && t.dtype() == DType::kF32 && t.ndim() == 4, ExitCode::kInternal,
             "{}: {} {} must be a host f32 [C, t, H, W] tensor", op, what, t.defined() ? t.str() : "undefined");
}
}  // namespace

void vae_dup_up_add_(Tensor& y, const Tensor& x, int64_t cout, int64_t factor_t, int64_t factor_s, int64_t phase) {
  if (!y.is_cpu()) return cuda_vae_dup_up_add_(y, x, cout, factor_t, factor_s, phase);
  check_host(y, "vae_dup_up_add_", "output");
  check_host(x, "vae_dup_up_add_", "input");
  const int64_t Cin = x.dim(0), t = x.dim(1), H = x.dim(2), W = x.dim(3), fs = factor_s;
  VGEN_ASSERT(factor_t >= 1 && fs >= 1 && phase >= 0 && phase < factor_t && (cout * factor_t * fs * fs) % Cin == 0 &&
                  y.dim(0) >= cout && y.dim(1) == t && y.dim(2) == fs * H && y.dim(3) == fs * W,
              "vae_dup_up_add_: input {} onto {} channels (factor_t {}, factor_s {}, phase {}) into {}", x.str(), cout,
              factor_t, fs, phase, y.str());
  kern::dup_up_add_ref(y.f32(), x.f32(), Cin, cout, y.dim(0), t, H, W, factor_t, fs, phase);
}

Tensor vae_subpixel_shuffle_dup_up(const Tensor& r, int64_t C, const Tensor& x, int64_t factor_t, int64_t phase) {
  if (!r.is_cpu()) return cuda_vae_subpixel_shuffle_dup_up(r, C, x, factor_t, phase);
  Tensor y = vae_subpixel_shuffle(r, C);  // [C, t, 2H, 2W]
  vae_dup_up_add_(y, x, C, factor_t, 2, phase);
  return y;
}

void vae_write_frames_unpatchify(const Tensor& x, int64_t C, int64_t p, float lo, float hi, Tensor& video,
                                 int64_t f0) {
  if (!x.is_cpu()) return cuda_vae_write_frames_unpatchify(x, C, p, lo, hi, video, f0);
  check_host(x, "vae_write_frames_unpatchify", "input");
  check_host(video, "vae_write_frames_unpatchify", "video");
  const int64_t t = x.dim(1), H = x.dim(2), W = x.dim(3), F = video.dim(1);
  VGEN_ASSERT(p >= 1 && C * p * p <= x.dim(0) && video.dim(0) == C && video.dim(2) == p * H && video.dim(3) == p * W &&
                  f0 >= 0 && f0 + t <= F,
              "vae_write_frames_unpatchify: frames {} (patch {}, {} channels) at {} into video {}", x.str(), p, C, f0,
              video.str());
  const int64_t plane = p * H * p * W;
  kern::unpatchify_clamp_ref(x.f32(), video.f32() + f0 * plane, x.dim(0), C, p, t, H, W, F * plane, lo, hi);
}

#ifndef VGEN_WITH_CUDA
void cuda_vae_dup_up_add_(Tensor&, const Tensor&, int64_t, int64_t, int64_t, int64_t) {
  throw_no_cuda("vae_dup_up_add_");
}
Tensor cuda_vae_subpixel_shuffle_dup_up(const Tensor&, int64_t, const Tensor&, int64_t, int64_t) {
  throw_no_cuda("vae_subpixel_shuffle_dup_up");
}
void cuda_vae_write_frames_unpatchify(const Tensor&, int64_t, int64_t, float, float, Tensor&, int64_t) {
  throw_no_cuda("vae_write_frames_unpatchify");
}
#endif

}  // namespace vgen
