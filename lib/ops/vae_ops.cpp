#include "ops/vae_ops.h"

#include <cstring>

#include "kernels/vae_norm/vae_norm_ref.h"
#include "kernels/vae_ops/vae_ops_ref.h"

namespace vgen {

namespace {
void check_cpu_f32(const Tensor& t, const char* op, const char* what) {
  VGEN_CHECK(t.defined(), ExitCode::kInternal, "{}: {} is undefined", op, what);
  VGEN_CHECK(t.is_cpu(), ExitCode::kInternal, "{}: {} {} is on the GPU (the device decoder uses ops/vae_device_ops.h)",
             op, what, t.str());
  VGEN_CHECK(t.dtype() == DType::kF32, ExitCode::kInternal, "{}: {} {} must be f32", op, what, t.str());
}
}  // namespace

Tensor vae_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dPad& pad, const Tensor& prev) {
  check_cpu_f32(x, "vae_conv3d", "input");
  check_cpu_f32(w, "vae_conv3d", "weight");
  VGEN_ASSERT(x.ndim() == 4, "vae_conv3d input {} must be [C,T,H,W]", x.str());
  VGEN_ASSERT(w.ndim() == 5 || w.ndim() == 4, "vae_conv3d weight {} must be 4-D or 5-D", w.str());
  const int64_t Cout = w.dim(0), Cin = w.dim(1);
  const int64_t kt = w.ndim() == 5 ? w.dim(2) : 1, kh = w.dim(-2), kw = w.dim(-1);
  VGEN_ASSERT(x.dim(0) == Cin, "vae_conv3d input {} vs weight {}: channel mismatch", x.str(), w.str());
  if (b.defined()) {
    check_cpu_f32(b, "vae_conv3d", "bias");
    VGEN_ASSERT(b.numel() == Cout, "vae_conv3d bias {} vs weight {}", b.str(), w.str());
  }
  const int64_t Ti = x.dim(1), Hi = x.dim(2), Wi = x.dim(3);
  int64_t Tp = 0;
  if (prev.defined()) {
    check_cpu_f32(prev, "vae_conv3d", "previous frames");
    VGEN_ASSERT(prev.ndim() == 4 && prev.dim(0) == Cin && prev.dim(2) == Hi && prev.dim(3) == Wi,
                "vae_conv3d: previous frames {} vs input {}", prev.str(), x.str());
    Tp = prev.dim(1);
  }
  const int64_t To = Tp + Ti - kt + 1, Ho = Hi + pad.top + pad.bottom - kh + 1, Wo = Wi + pad.left + pad.right - kw + 1;
  VGEN_ASSERT(To >= 1 && Ho >= 1 && Wo >= 1, "vae_conv3d: input {} too small for kernel {}", x.str(), w.str());
  Tensor y = Tensor::empty({Cout, To, Ho, Wo}, DType::kF32);
  kern::conv3d_ref(x.f32(), w.f32(), b.defined() ? b.f32() : nullptr, y.f32(), 1, Cin, Ti, Hi, Wi, Cout, kt, kh, kw,
                   pad, prev.defined() ? prev.f32() : nullptr, Tp);
  return y;
}

Tensor vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu) {
  check_cpu_f32(x, "vae_rms_norm", "input");
  check_cpu_f32(gamma, "vae_rms_norm", "gamma");
  const int64_t C = x.dim(0);
  VGEN_ASSERT(gamma.numel() == C, "vae_rms_norm: gamma {} vs input {}", gamma.str(), x.str());
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::vae_rms_norm_ref(x.f32(), gamma.f32(), y.f32(), 1, C, C != 0 ? x.numel() / C : 0, silu);
  return y;
}

Tensor upsample_nearest2x(const Tensor& x) {
  check_cpu_f32(x, "upsample_nearest2x", "input");
  VGEN_ASSERT(x.ndim() >= 2, "upsample_nearest2x input {}", x.str());
  Shape s = x.shape();
  const int64_t H = s[s.size() - 2], W = s[s.size() - 1];
  const int64_t P = (H * W != 0) ? x.numel() / (H * W) : 0;
  s[s.size() - 2] *= 2;
  s[s.size() - 1] *= 2;
  Tensor y = Tensor::empty(s, DType::kF32);
  kern::upsample_nearest2x_ref(x.f32(), y.f32(), P, H, W);
  return y;
}

Tensor time_interleave2(const Tensor& x) {
  check_cpu_f32(x, "time_interleave2", "input");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(0) % 2 == 0, "time_interleave2 input {}", x.str());
  const int64_t C = x.dim(0) / 2, T = x.dim(1), S = x.dim(2) * x.dim(3);
  Tensor y = Tensor::empty({C, 2 * T, x.dim(2), x.dim(3)}, DType::kF32);
  kern::time_interleave2_ref(x.f32(), y.f32(), C, T, S);
  return y;
}

void add_(Tensor& y, const Tensor& x) {
  check_cpu_f32(y, "add_", "output");
  check_cpu_f32(x, "add_", "input");
  VGEN_ASSERT(y.numel() == x.numel(), "add_: {} vs {}", y.str(), x.str());
  kern::add_inplace_ref(y.f32(), x.f32(), y.numel());
}

void clamp_(Tensor& t, float lo, float hi) {
  check_cpu_f32(t, "clamp_", "tensor");
  kern::clamp_ref(t.f32(), t.f32(), t.numel(), lo, hi);
}

Tensor cat_time(const Tensor& a, const Tensor& b) {
  check_cpu_f32(a, "cat_time", "first");
  check_cpu_f32(b, "cat_time", "second");
  VGEN_ASSERT(a.ndim() == 4 && b.ndim() == 4 && a.dim(0) == b.dim(0) && a.dim(2) == b.dim(2) && a.dim(3) == b.dim(3),
              "cat_time: {} and {}", a.str(), b.str());
  const int64_t C = a.dim(0), Ta = a.dim(1), Tb = b.dim(1), S = a.dim(2) * a.dim(3);
  Tensor y = Tensor::empty({C, Ta + Tb, a.dim(2), a.dim(3)}, DType::kF32);
  for (int64_t c = 0; c < C; ++c) {
    std::memcpy(y.f32() + c * (Ta + Tb) * S, a.f32() + c * Ta * S, size_t(Ta * S) * sizeof(float));
    std::memcpy(y.f32() + (c * (Ta + Tb) + Ta) * S, b.f32() + c * Tb * S, size_t(Tb * S) * sizeof(float));
  }
  return y;
}

Tensor slice_time(const Tensor& x, int64_t t0, int64_t len) {
  check_cpu_f32(x, "slice_time", "input");
  VGEN_ASSERT(x.ndim() == 4 && t0 >= 0 && len >= 0 && t0 + len <= x.dim(1), "slice_time [{}, +{}) of {}", t0, len,
              x.str());
  const int64_t C = x.dim(0), T = x.dim(1), S = x.dim(2) * x.dim(3);
  Tensor y = Tensor::empty({C, len, x.dim(2), x.dim(3)}, DType::kF32);
  for (int64_t c = 0; c < C; ++c)
    std::memcpy(y.f32() + c * len * S, x.f32() + (c * T + t0) * S, size_t(len * S) * sizeof(float));
  return y;
}

}  // namespace vgen
