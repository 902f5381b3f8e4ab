#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "core/cuda_stream.h"
#include "kernels/conv3d/conv3d.cuh"
#include "kernels/conv3d/conv_weight.cuh"
#include "kernels/vae_attn/vae_attn.cuh"
#include "kernels/vae_norm/vae_norm.cuh"
#include "kernels/vae_ops/vae_ops.cuh"
#include "ops/device_op_checks.h"
#include "ops/vae_device_ops.h"

namespace vgen {

namespace {

using namespace device_ops;

// Score memory of one query block of the frame attention (fp32 elements).
constexpr int64_t kAttnScoreElems = int64_t(64) << 20;

kern::ConvBackend kern_backend(VaeConvBackend b) {
  switch (b) {
    case VaeConvBackend::kCudnn: return kern::ConvBackend::kCudnn;
    case VaeConvBackend::kGemm: return kern::ConvBackend::kGemm;
    default: return kern::ConvBackend::kAuto;
  }
}

}  // namespace

VaeConvCounts vae_conv_counts() {
  const kern::Conv3dStats s = kern::conv3d_stats();
  return {s.cudnn_calls, s.gemm_calls, s.cudnn_rejected, s.cudnn_unfused_bias, s.cudnn_unfused_residual};
}

void cuda_vae_conv_weight_layout(const Tensor& src, Tensor& dst) {
  check_dev(src, "vae_conv_weight_layout", "src");
  check_dev(dst, "vae_conv_weight_layout", "dst");
  VGEN_ASSERT(src.dtype() == DType::kF32 && src.ndim() >= 2 && dst.ndim() >= 2 && dst.dim(-1) == src.dim(1) &&
                  dst.dim(0) >= src.dim(0),
              "vae_conv_weight_layout: src {} [Cout, Cin, taps] f32 into dst {} [Cout_store, taps, Cin]", src.str(),
              dst.str());
  kern::ConvWeightDims d;
  d.cout = src.dim(0);
  d.cin = src.dim(1);
  d.taps = src.numel() / std::max<int64_t>(1, d.cout * d.cin);
  d.cout_store = dst.dim(0);
  VGEN_ASSERT(dst.numel() == d.cout_store * d.taps * d.cin, "vae_conv_weight_layout: dst {} for src {}", dst.str(),
              src.str());
  kern::FloatType ot{};
  VGEN_ASSERT(float_type(dst.dtype(), &ot), "vae_conv_weight_layout: dst {} is not a float tensor", dst.str());
  VGEN_CUDA_CHECK(kern::conv_weight_taps_last(src.f32(), dst.raw(), ot, d, compute_stream()));
}

Tensor cuda_vae_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const kern::Conv3dPad& pad,
                       const VaeConvPolicy& policy, const Tensor* residual) {
  const kern::FloatType t = act_type(x, "vae_conv3d", "input");
  check_dev(w, "vae_conv3d", "weight");
  VGEN_ASSERT(x.ndim() == 4 || x.ndim() == 5, "vae_conv3d: input {} must be [T,H,W,C] or [N,T,H,W,C]", x.str());
  VGEN_ASSERT(w.ndim() == 5 && w.dtype() == x.dtype() && w.dim(4) == x.dim(-1),
              "vae_conv3d: weight {} must be [Cout,kt,kh,kw,Cin] of the input's dtype for input {}", w.str(), x.str());
  kern::Conv3dArgs a;
  a.type = t;
  a.N = x.ndim() == 5 ? x.dim(0) : 1;
  a.Ti = x.dim(-4), a.Hi = x.dim(-3), a.Wi = x.dim(-2), a.Cin = x.dim(-1);
  a.Cout = w.dim(0), a.kt = w.dim(1), a.kh = w.dim(2), a.kw = w.dim(3);
  a.pad = pad;
  a.autotune = policy.autotune;
  if (b.defined()) {
    check_dev(b, "vae_conv3d", "bias");
    VGEN_ASSERT(b.dtype() == DType::kF32 && b.numel() == a.Cout, "vae_conv3d: bias {} must be f32 [{}]", b.str(),
                a.Cout);
    a.bias = b.f32();
  }
  VGEN_ASSERT(a.To() >= 1 && a.Ho() >= 1 && a.Wo() >= 1, "vae_conv3d: input {} too small for weight {}", x.str(),
              w.str());
  Shape ys = {a.To(), a.Ho(), a.Wo(), a.Cout};
  if (x.ndim() == 5) ys.insert(ys.begin(), a.N);
  Tensor y = Tensor::empty(ys, x.dtype(), Device::kCUDA);
  a.x = x.raw(), a.w = w.raw(), a.y = y.raw();
  if (residual) {
    check_dev(*residual, "vae_conv3d", "residual");
    VGEN_ASSERT(residual->dtype() == x.dtype() && residual->numel() == y.numel(),
                "vae_conv3d: residual {} for the output {}", residual->str(), shape_str(ys));
    a.residual = residual->raw();
  }
  kern::ConvBackend chosen{};
  size_t ws = 0;
  launched(kern::conv3d_prepare(a, kern_backend(policy.backend), &chosen, &ws), "vae_conv3d (plan)", x,
           kern::conv3d_last_error());
  Tensor work;
  if (ws > 0) work = Tensor::empty({int64_t(ws)}, DType::kU8, Device::kCUDA);
  launched(kern::conv3d_forward(a, chosen, ws > 0 ? work.raw() : nullptr, ws, compute_stream()), "vae_conv3d", x,
           kern::conv3d_last_error());
  return y;
}

void cuda_vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu, Tensor& y) {
  const kern::FloatType xt = act_type(x, "vae_rms_norm", "input");
  const kern::FloatType yt = act_type(y, "vae_rms_norm", "output");
  check_dev(gamma, "vae_rms_norm", "gamma");
  const int64_t C = x.dim(-1);
  VGEN_ASSERT(gamma.dtype() == DType::kF32 && gamma.numel() == C, "vae_rms_norm: gamma {} for input {}", gamma.str(),
              x.str());
  VGEN_ASSERT(y.numel() == x.numel(), "vae_rms_norm: output {} for input {}", y.str(), x.str());
  launched(kern::vae_rms_norm(x.raw(), xt, gamma.f32(), y.raw(), yt, 1, C, C ? x.numel() / C : 0, silu,
                              kern::VaeLayout::kChannelsLast, compute_stream()),
           "vae_rms_norm", x);
}

Tensor cuda_vae_time_interleave2(const Tensor& x) {
  const kern::FloatType t = act_type(x, "vae_time_interleave2", "input");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(3) % 2 == 0, "vae_time_interleave2: input {} must be [T,H,W,2C]", x.str());
  const int64_t C = x.dim(3) / 2;
  Tensor y = Tensor::empty({2 * x.dim(0), x.dim(1), x.dim(2), C}, x.dtype(), Device::kCUDA);
  launched(kern::vae_time_interleave2(x.raw(), y.raw(), t, C, x.dim(0), x.dim(1) * x.dim(2), true, compute_stream()),
           "vae_time_interleave2", x);
  return y;
}

void cuda_vae_add_(Tensor& y, const Tensor& x) {
  const kern::FloatType t = act_type(y, "vae_add_", "output");
  VGEN_ASSERT(act_type(x, "vae_add_", "input") == t && x.numel() == y.numel(), "vae_add_: {} += {}", y.str(), x.str());
  launched(kern::vae_add_inplace(y.raw(), x.raw(), t, y.numel(), compute_stream()), "vae_add_", y);
}

void cuda_vae_clamp_(Tensor& t, float lo, float hi) {
  const kern::FloatType ft = act_type(t, "vae_clamp_", "tensor");
  launched(kern::vae_clamp(t.raw(), t.raw(), ft, t.numel(), lo, hi, compute_stream()), "vae_clamp_", t);
}

void cuda_vae_write_frames(const Tensor& x, int64_t C, float lo, float hi, Tensor& video, int64_t f0) {
  const kern::FloatType t = act_type(x, "vae_write_frames", "input");
  check_dev(video, "vae_write_frames", "video");
  VGEN_ASSERT(x.ndim() == 4 && video.ndim() == 4 && video.dtype() == DType::kF32 && video.dim(0) == C &&
                  C <= x.dim(3) && video.dim(2) == x.dim(1) && video.dim(3) == x.dim(2) && f0 >= 0 &&
                  f0 + x.dim(0) <= video.dim(1),
              "vae_write_frames: frames {} (channels [0, {})) at {} into video {}", x.str(), C, f0, video.str());
  const int64_t S = x.dim(1) * x.dim(2), F = video.dim(1);
  launched(kern::vae_to_channels_first(x.raw(), t, video.f32() + f0 * S, x.dim(0), S, x.dim(3), C, F * S, lo, hi,
                                       compute_stream()),
           "vae_write_frames", x);
}

Tensor cuda_vae_frame_attention(const Tensor& qkv, const Tensor& kv, int64_t C) {
  const kern::FloatType t = act_type(qkv, "vae_frame_attention", "qkv");
  VGEN_ASSERT(act_type(kv, "vae_frame_attention", "kv") == t && qkv.ndim() == 2 && kv.ndim() == 2 &&
                  qkv.dim(1) == 3 * C && kv.dim(1) == 3 * C && C >= 1,
              "vae_frame_attention: qkv {} and kv {} must be [S, 3·{}]", qkv.str(), kv.str(), C);
  Tensor out = Tensor::empty({qkv.dim(0), C}, qkv.dtype(), Device::kCUDA);
  const size_t es = dtype_size(qkv.dtype());
  kern::VaeAttnArgs a;
  a.q = qkv.raw();
  a.k = static_cast<const char*>(kv.raw()) + size_t(C) * es;
  a.v = static_cast<const char*>(kv.raw()) + size_t(2 * C) * es;
  a.out = out.raw();
  a.ldq = a.ldk = a.ldv = 3 * C;
  a.ldo = C;
  a.Sq = qkv.dim(0), a.Skv = kv.dim(0), a.D = C;
  a.scale = 1.0f / std::sqrt(float(C));
  a.type = t;
  a.block_rows = std::max<int64_t>(1, kAttnScoreElems / std::max<int64_t>(1, a.Skv));
  const size_t ws = kern::vae_attention_workspace(a);
  Tensor work = Tensor::empty({int64_t(ws)}, DType::kU8, Device::kCUDA);
  launched(kern::vae_attention(a, work.raw(), ws, compute_stream()), "vae_frame_attention", qkv,
           kern::vae_attention_last_error());
  return out;
}

void cuda_copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
  if (width == 0 || height == 0) return;
  const cudaError_t e =
      cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, compute_stream());
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "cudaMemcpy2DAsync of {} rows of {} bytes failed: {}", height, width,
               cudaGetErrorString(e));
}

void cuda_zero_2d(void* dst, size_t pitch, size_t width, size_t height) {
  if (width == 0 || height == 0) return;
  const cudaError_t e = cudaMemset2DAsync(dst, pitch, 0, width, height, compute_stream());
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "cudaMemset2DAsync of {} rows of {} bytes failed: {}", height, width,
               cudaGetErrorString(e));
}

}  // namespace vgen
