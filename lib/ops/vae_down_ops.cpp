#include "ops/vae_down_ops.h"

#include "core/no_cuda_error.h"
#include "kernels/vae_down/vae_down_ref.h"

namespace vgen {

namespace {
void check_host_f32(const Tensor& t, const char* op, const char* what) {
  VGEN_ASSERT(t.defined() && t.is_cpu() && t.dtype() == DType::kF32, "{}: {} must be a host f32 tensor, got {}", op,
              what, t.defined() ? t.str() : std::string("undefined"));
}
}  // namespace

Tensor vae_video_frames(const Tensor& video, int64_t f0, int64_t n) {
  VGEN_ASSERT(video.defined() && video.ndim() == 4 && video.dtype() == DType::kF32 && f0 >= 0 && n >= 0 &&
                  f0 + n <= video.dim(1),
              "vae_video_frames: frames [{}, +{}) of {} ([C, F, H, W] f32)", f0, n,
              video.defined() ? video.str() : std::string("undefined"));
  const int64_t C = video.dim(0), F = video.dim(1), S = video.dim(2) * video.dim(3);
  Tensor y = Tensor::empty({C, n, video.dim(2), video.dim(3)}, DType::kF32, video.device());  // [C, n, H, W]
  const size_t row = size_t(n * S) * sizeof(float);
  copy_2d(video.device(), y.raw(), row, static_cast<const float*>(video.raw()) + f0 * S, size_t(F * S) * sizeof(float),
          row, size_t(C));
  return y;
}

void vae_patchify_into(const Tensor& frames, int64_t patch, Tensor& y) {
  if (!y.is_cpu()) return cuda_vae_patchify(frames, patch, y);
  check_host_f32(frames, "vae_patchify", "frames");
  check_host_f32(y, "vae_patchify", "output");
  VGEN_ASSERT(frames.ndim() == 4, "vae_patchify: frames {} must be [C, t, H, W]", frames.str());
  const int64_t C = frames.dim(0), t = frames.dim(1), H = frames.dim(2), W = frames.dim(3), p = patch;
  VGEN_ASSERT(p >= 1 && H % p == 0 && W % p == 0 &&
                  y.shape() == (Shape{C * p * p, t, H / p, W / p}),
              "vae_patchify: frames {} with patch {} into {}", frames.str(), p, y.str());
  kern::patchify_ref(frames.f32(), y.f32(), C, t, H, W, p);
}

Tensor vae_strided_conv(const VaeConvWeights& c, const Tensor& x, const Conv3dPad& pad, int64_t stride_t,
                        int64_t stride_s, const VaeConvPolicy& conv) {
  VGEN_ASSERT(vae_dims(x).C == c.cin && stride_t >= 1 && stride_s >= 1,
              "VAE strided conv: input {} for {} input channels, strides {}, {}", x.str(), c.cin, stride_t, stride_s);
  if (!x.is_cpu()) return cuda_vae_conv3d_strided(x, c.w, c.b, pad, stride_t, stride_s, conv);
  check_host_f32(x, "vae_strided_conv", "input");
  check_host_f32(c.w, "vae_strided_conv", "weight");
  const int64_t t = x.dim(1), H = x.dim(2), W = x.dim(3);
  VGEN_ASSERT(t >= c.kt && H + pad.top + pad.bottom >= c.kh && W + pad.left + pad.right >= c.kw,
              "vae_strided_conv: input {} smaller than the kernel {}x{}x{}", x.str(), c.kt, c.kh, c.kw);
  const int64_t To = (t - c.kt) / stride_t + 1, Ho = (H + pad.top + pad.bottom - c.kh) / stride_s + 1;
  const int64_t Wo = (W + pad.left + pad.right - c.kw) / stride_s + 1;
  Tensor y = Tensor::empty({c.cout, To, Ho, Wo}, DType::kF32);  // [Cout, To, Ho, Wo]
  kern::conv3d_strided_ref(x.f32(), c.w.f32(), c.b.defined() ? c.b.f32() : nullptr, y.f32(), c.cin, t, H, W, c.cout,
                           c.kt, c.kh, c.kw, pad, stride_t, stride_s);
  return y;
}

void vae_avg_down_add_(Tensor& y, const Tensor& x, int64_t factor_t, int64_t factor_s) {
  if (!y.is_cpu()) return cuda_vae_avg_down_add_(y, x, factor_t, factor_s);
  check_host_f32(x, "vae_avg_down_add_", "input");
  check_host_f32(y, "vae_avg_down_add_", "output");
  const VaeDims d = vae_dims(x), o = vae_dims(y);
  VGEN_ASSERT(factor_t >= 1 && factor_s >= 1 && d.H % factor_s == 0 && d.W % factor_s == 0 &&
                  o.t == kern::avg_down_frames(d.t, factor_t) && o.H == d.H / factor_s && o.W == d.W / factor_s &&
                  (d.C * factor_t * factor_s * factor_s) % o.C == 0,
              "vae_avg_down_add_: {} += AvgDown3D({}, factors {}, {})", y.str(), x.str(), factor_t, factor_s);
  kern::avg_down_add_ref(x.f32(), y.f32(), d.C, d.t, d.H, d.W, o.C, factor_t, factor_s);
}

Tensor vae_cat_frames(const Tensor& a, const Tensor& b) {
  if (a.is_cpu()) return cat_time(a, b);
  VGEN_ASSERT(a.ndim() == 4 && b.ndim() == 4 && a.dtype() == b.dtype() && !b.is_cpu() && a.dim(1) == b.dim(1) &&
                  a.dim(2) == b.dim(2) && a.dim(3) == b.dim(3),
              "vae_cat_frames: {} and {}", a.str(), b.str());
  Tensor y = Tensor::empty({a.dim(0) + b.dim(0), a.dim(1), a.dim(2), a.dim(3)}, a.dtype(),
                           a.device());  // [ta + tb, H, W, C]
  Tensor front = y.narrow(0, a.dim(0)), back = y.narrow(a.dim(0), b.dim(0));
  front.copy_from(a);
  back.copy_from(b);
  return y;
}

#ifndef VGEN_WITH_CUDA
Tensor cuda_vae_conv3d_strided(const Tensor&, const Tensor&, const Tensor&, const kern::Conv3dPad&, int64_t, int64_t,
                               const VaeConvPolicy&) {
  throw_no_cuda("vae_conv3d_strided");
}
void cuda_vae_patchify(const Tensor&, int64_t, Tensor&) { throw_no_cuda("vae_patchify"); }
void cuda_vae_avg_down_add_(Tensor&, const Tensor&, int64_t, int64_t) { throw_no_cuda("vae_avg_down_add_"); }
#endif

}  // namespace vgen
