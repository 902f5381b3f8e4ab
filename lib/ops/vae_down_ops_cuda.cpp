// Device sides of ops/vae_down_ops.h: the strided conv on kernels/conv3d (the backend of the
// caller's VaeConvPolicy, as the decoder's convs), patchify and AvgDown3D on kernels/vae_down/.
#include "core/cuda_stream.h"
#include "kernels/conv3d/conv3d.cuh"
#include "kernels/vae_down/vae_down.cuh"
#include "kernels/vae_down/vae_down_ref.h"
#include "ops/device_op_checks.h"
#include "ops/vae_device_ops.h"
#include "ops/vae_down_ops.h"

namespace vgen {

using namespace device_ops;

namespace {
kern::ConvBackend kern_backend(VaeConvBackend b) {
  switch (b) {
    case VaeConvBackend::kCudnn: return kern::ConvBackend::kCudnn;
    case VaeConvBackend::kGemm: return kern::ConvBackend::kGemm;
    default: return kern::ConvBackend::kAuto;
  }
}
}  // namespace

Tensor cuda_vae_conv3d_strided(const Tensor& x, const Tensor& w, const Tensor& b, const kern::Conv3dPad& pad,
                               int64_t stride_t, int64_t stride_s, const VaeConvPolicy& policy) {
  kern::Conv3dArgs a;
  a.type = act_type(x, "vae_conv3d_strided", "input");
  check_dev(w, "vae_conv3d_strided", "weight");
  VGEN_ASSERT(x.ndim() == 4 && w.ndim() == 5 && w.dtype() == x.dtype() && w.dim(4) == x.dim(3),
              "vae_conv3d_strided: weight {} must be [Cout,kt,kh,kw,Cin] of the dtype of input {} [T,H,W,Cin]", w.str(),
              x.str());
  a.Ti = x.dim(0), a.Hi = x.dim(1), a.Wi = x.dim(2), a.Cin = x.dim(3);
  a.Cout = w.dim(0), a.kt = w.dim(1), a.kh = w.dim(2), a.kw = w.dim(3);
  a.pad = pad;
  a.stride_t = stride_t, a.stride_s = stride_s;
  a.autotune = policy.autotune;
  if (b.defined()) {
    check_dev(b, "vae_conv3d_strided", "bias");
    VGEN_ASSERT(b.dtype() == DType::kF32 && b.numel() == a.Cout, "vae_conv3d_strided: bias {} must be f32 [{}]",
                b.str(), a.Cout);
    a.bias = b.f32();
  }
  VGEN_ASSERT(stride_t >= 1 && stride_s >= 1 && a.Ti >= a.kt && a.Hi + pad.top + pad.bottom >= a.kh &&
                  a.Wi + pad.left + pad.right >= a.kw,
              "vae_conv3d_strided: input {} too small for weight {} (strides {}, {})", x.str(), w.str(), stride_t,
              stride_s);
  Tensor y = Tensor::empty({a.To(), a.Ho(), a.Wo(), a.Cout}, x.dtype(), Device::kCUDA);  // [To, Ho, Wo, Cout]
  a.x = x.raw(), a.w = w.raw(), a.y = y.raw();
  kern::ConvBackend chosen{};
  size_t ws = 0;
  launched(kern::conv3d_prepare(a, kern_backend(policy.backend), &chosen, &ws), "vae_conv3d_strided (plan)", x,
           kern::conv3d_last_error());
  Tensor work;
  if (ws > 0) work = Tensor::empty({int64_t(ws)}, DType::kU8, Device::kCUDA);
  launched(kern::conv3d_forward(a, chosen, ws > 0 ? work.raw() : nullptr, ws, compute_stream()), "vae_conv3d_strided",
           x, kern::conv3d_last_error());
  return y;
}

void cuda_vae_patchify(const Tensor& frames, int64_t patch, Tensor& y) {
  check_dev(frames, "vae_patchify", "frames");
  const kern::FloatType t = act_type(y, "vae_patchify", "output");
  const int64_t p = patch;
  VGEN_ASSERT(frames.ndim() == 4 && frames.dtype() == DType::kF32 && p >= 1 && frames.dim(2) % p == 0 &&
                  frames.dim(3) % p == 0 &&
                  y.shape() == (Shape{frames.dim(1), frames.dim(2) / p, frames.dim(3) / p, frames.dim(0) * p * p}),
              "vae_patchify: frames {} ([C, t, H, W] f32) with patch {} into {}", frames.str(), p, y.str());
  launched(kern::vae_patchify(frames.f32(), y.raw(), t, frames.dim(0), frames.dim(1), frames.dim(2), frames.dim(3), p,
                              compute_stream()),
           "vae_patchify", frames);
}

void cuda_vae_avg_down_add_(Tensor& y, const Tensor& x, int64_t factor_t, int64_t factor_s) {
  const kern::FloatType t = act_type(y, "vae_avg_down_add_", "output");
  VGEN_ASSERT(act_type(x, "vae_avg_down_add_", "input") == t && x.ndim() == 4 && y.ndim() == 4 && factor_t >= 1 &&
                  factor_s >= 1 && x.dim(1) % factor_s == 0 && x.dim(2) % factor_s == 0 &&
                  y.dim(0) == kern::avg_down_frames(x.dim(0), factor_t) && y.dim(1) == x.dim(1) / factor_s &&
                  y.dim(2) == x.dim(2) / factor_s && (x.dim(3) * factor_t * factor_s * factor_s) % y.dim(3) == 0,
              "vae_avg_down_add_: {} += AvgDown3D({}, factors {}, {})", y.str(), x.str(), factor_t, factor_s);
  launched(kern::vae_avg_down_add(x.raw(), y.raw(), t, x.dim(3), x.dim(0), x.dim(1), x.dim(2), y.dim(3), factor_t,
                                  factor_s, compute_stream()),
           "vae_avg_down_add_", y);
}

}  // namespace vgen
