#include "ops/vae_ops.h"

#include <cmath>
#include <cstring>

#include "kernels/attention/attention_ref.h"
#include "kernels/vae_norm/vae_norm_ref.h"
#include "kernels/vae_ops/vae_ops_ref.h"
#include "ops/device_ops.h"
#include "ops/vae_device_ops.h"

namespace vgen {

namespace {
void check_cpu_f32(const Tensor& t, const char* op, const char* what) {
  VGEN_CHECK(t.defined(), ExitCode::kInternal, "{}: {} is undefined", op, what);
  VGEN_CHECK(t.is_cpu(), ExitCode::kInternal, "{}: {} {} is on the GPU (a host reference)", op, what, t.str());
  VGEN_CHECK(t.dtype() == DType::kF32, ExitCode::kInternal, "{}: {} {} must be f32", op, what, t.str());
}

void check_activation(const Tensor& x, const char* op) {
  VGEN_ASSERT(x.defined() && x.ndim() == 4, "{}: activation {} must be 4-D ([C,t,H,W] host, [t,H,W,C] device)", op,
              x.defined() ? x.str() : std::string("undefined"));
}

// [C, S] → [S, C]
void transpose_cs(const float* src, float* dst, int64_t C, int64_t S) {
#pragma omp parallel for schedule(static)
  for (int64_t s = 0; s < S; ++s)
    for (int64_t c = 0; c < C; ++c) dst[s * C + c] = src[c * S + s];
}
}  // namespace

VaeDims vae_dims(const Tensor& x) {
  check_activation(x, "vae_dims");
  if (x.is_cpu()) return {x.dim(0), x.dim(1), x.dim(2), x.dim(3)};
  return {x.dim(3), x.dim(0), x.dim(1), x.dim(2)};
}

Shape vae_shape(const VaeDims& d, Device device) {
  if (device == Device::kCPU) return {d.C, d.t, d.H, d.W};
  return {d.t, d.H, d.W, d.C};
}

Tensor vae_frames(const Tensor& x, int64_t t0, int64_t len) {
  if (x.is_cpu()) return slice_time(x, t0, len);
  check_activation(x, "vae_frames");
  return x.narrow(t0, len);
}

Tensor vae_latents_in(const Tensor& z, DType dt, Device device) {
  Tensor zh = z.to(Device::kCPU).to(DType::kF32);  // [Z, T, H, W]
  if (device == Device::kCPU) return zh;
  // Channels-last on the host (small), then one upload in the compute dtype.
  const int64_t Z = zh.dim(0), TS = zh.numel() / Z;
  Tensor zl = Tensor::empty({zh.dim(1), zh.dim(2), zh.dim(3), Z}, DType::kF32);  // [T, H, W, Z]
  for (int64_t c = 0; c < Z; ++c)
    for (int64_t p = 0; p < TS; ++p) zl.f32()[p * Z + c] = zh.f32()[c * TS + p];
  return zl.to(dt).to(device);
}

int64_t vae_conv_front(Device device, int64_t kt) { return device == Device::kCPU ? 0 : kt - 1; }

VaeConvBuffer vae_conv_buffer(const Shape& shape, DType dt, Device device, int64_t front) {
  if (device == Device::kCPU) {
    VGEN_ASSERT(front == 0 && dt == DType::kF32, "vae_conv_buffer: the host's buffer holds f32 and no cached frames");
    Tensor b = Tensor::empty(shape, DType::kF32);
    return {b, b};
  }
  Shape s = shape;
  s[0] += front;
  Tensor buf = Tensor::empty(s, dt, device);  // [front + t, H, W, C]
  return {buf, buf.narrow(front, shape[0])};
}

VaeBufferAlloc vae_buffer_alloc(DType dt, Device device, int64_t front) {
  return [=](const Shape& body) { return vae_conv_buffer(body, dt, device, front); };
}

void vae_conv_tap_rotations(const Tensor& w, std::vector<Tensor>& rot) {
  VGEN_ASSERT(!w.is_cpu() && w.ndim() == 5, "vae_conv_tap_rotations: device weight {} must be [Cout, kt, kh, kw, Cin]",
              w.str());
  const int64_t cout = w.dim(0), kt = w.dim(1);
  const size_t tap = size_t(w.numel() / (cout * kt)) * dtype_size(w.dtype()), row = size_t(kt) * tap;
  if (rot.empty())
    for (int64_t r = 1; r < kt; ++r) rot.push_back(Tensor::empty(w.shape(), w.dtype(), w.device()));
  VGEN_ASSERT(int64_t(rot.size()) == kt - 1, "vae_conv_tap_rotations: {} rotations for {} taps", rot.size(), kt);
  for (int64_t r = 1; r < kt; ++r)
    for (int64_t s = 0; s < kt; ++s)  // tap s of every output row from tap (s − r) mod kt
      cuda_copy_2d(static_cast<char*>(rot[size_t(r - 1)].raw()) + size_t(s) * tap, row,
                   static_cast<const char*>(w.raw()) + size_t((s - r + kt) % kt) * tap, row, tap, size_t(cout));
}

bool vae_ring_applies(const VaeConvWeights& c, const VaeConvCache* cache, const Shape& in_shape, Device device,
                      bool cache_copy) {
  if (device == Device::kCPU || cache == nullptr || cache_copy || c.kt < 2) return false;
  if (int64_t(c.w_rot.size()) != c.kt - 1 || in_shape[0] != 1) return false;  // device shape [t, H, W, C]
  VGEN_ASSERT(!cache->frames.defined(), "VAE conv: a cache used by copy switched to the ring");
  return true;
}

VaeBufferAlloc vae_ring_alloc(VaeConvCache& cache, int64_t kt, DType dt, Device device) {
  return [&cache, kt, dt, device](const Shape& body) {
    VGEN_ASSERT(body.size() == 4 && body[0] == 1, "VAE ring: body {} must be one frame [1, H, W, C]", shape_str(body));
    Shape ring_shape = body;
    ring_shape[0] = kt;
    if (!cache.ring.defined()) {
      cache.ring = Tensor::zeros(ring_shape, dt, device);  // the frames before the first: zeros
    } else {
      VGEN_ASSERT(cache.ring.shape() == ring_shape && cache.ring.dtype() == dt, "VAE ring {} for a frame {}",
                  cache.ring.str(), shape_str(body));
    }
    return VaeConvBuffer{cache.ring, cache.ring.narrow(vae_ring_slot(cache.calls, kt), 1)};
  };
}

Tensor vae_ring_conv(const VaeConvWeights& c, VaeConvCache& cache, const Conv3dPad& pad, const VaeConvPolicy& conv,
                     const Tensor* residual) {
  const int64_t r = cache.calls % c.kt;
  const Tensor& w = r == 0 ? c.w : c.w_rot[size_t(r - 1)];  // slot s holds tap vae_ring_tap(s, calls, kt)
  ++cache.calls;
  return cuda_vae_conv3d(cache.ring, w, c.b, pad, conv, residual);  // [1, H, W, cout_s]
}

namespace {

Tensor host_causal_conv(const VaeConvWeights& c, const Tensor& buf, const Conv3dPad& pad, VaeConvCache* cache) {
  if (c.kt == 1) return vae_conv3d(buf, c.w, c.b, pad);
  const int64_t keep = c.kt - 1;  // frames carried to the next chunk
  VGEN_ASSERT(cache != nullptr, "VAE conv with kt = {} needs a cache", c.kt);
  Tensor& prev = cache->frames;
  if (!prev.defined()) prev = Tensor::zeros({buf.dim(0), keep, buf.dim(2), buf.dim(3)}, DType::kF32);
  VGEN_ASSERT(prev.dim(2) == buf.dim(2) && prev.dim(3) == buf.dim(3), "causal_conv: cache {} vs chunk {}", prev.str(),
              buf.str());
  Tensor y = vae_conv3d(buf, c.w, c.b, pad, prev);  // [Cout, t, H, W] over [cache, buf]
  // New cache: the last `keep` frames of [cache, buf].
  const int64_t t = buf.dim(1);
  prev = t >= keep ? slice_time(buf, t - keep, keep) : cat_time(slice_time(prev, t, keep - t), buf);
  return y;
}

Tensor device_causal_conv(const VaeConvWeights& c, const Tensor& buf, const Conv3dPad& pad, VaeConvCache* cache,
                          bool cache_copy, const VaeConvPolicy& conv, const Tensor* residual) {
  const int64_t keep = c.kt - 1;
  if (keep > 0) {
    VGEN_ASSERT(cache != nullptr, "VAE conv with kt = {} needs a cache", c.kt);
    Tensor front = buf.narrow(0, keep);
    if (!cache->frames.defined()) {
      front.fill_zero();
    } else {
      VGEN_ASSERT(cache->frames.shape() == front.shape(), "VAE conv: cache {} vs chunk buffer {}",
                  cache->frames.str(), buf.str());
      front.copy_from(cache->frames);
    }
  }
  Tensor y = cuda_vae_conv3d(buf, c.w, c.b, pad, conv, residual);  // [t, H, W, cout_store]
  if (keep > 0 && cache) {
    Tensor last = buf.narrow(buf.dim(0) - keep, keep);
    if (!cache_copy)
      cache->frames = last;  // keeps this buffer alive instead of copying
    else if (!cache->frames.defined())
      cache->frames = last.clone();
    else
      cache->frames.copy_from(last);
  }
  return y;
}

}  // namespace

Tensor vae_causal_conv(const VaeConvWeights& c, const Tensor& buf, const Conv3dPad& pad, VaeConvCache* cache,
                       bool cache_copy, const VaeConvPolicy& conv, const Tensor* residual) {
  VGEN_ASSERT(vae_dims(buf).C == c.cin, "VAE conv: input {} for {} input channels", buf.str(), c.cin);
  VGEN_ASSERT(!residual || c.cout_store == c.cout, "VAE conv: a residual onto {} of {} stored channels", c.cout,
              c.cout_store);
  if (!buf.is_cpu()) return device_causal_conv(c, buf, pad, cache, cache_copy, conv, residual);
  Tensor y = host_causal_conv(c, buf, pad, cache);  // [Cout, t, H, W]
  if (residual) add_(y, *residual);
  return y;
}

Tensor vae_pointwise(const VaeConvWeights& c, const Tensor& x) {
  VGEN_ASSERT(c.pointwise() && vae_dims(x).C == c.cin, "VAE 1x1 conv: input {} for {} input channels", x.str(),
              c.cin);
  if (x.is_cpu()) return vae_conv3d(x, c.w, c.b, Conv3dPad{});
  Shape s = x.shape();
  // A bf16 bias for bf16 activations: cuBLASLt then adds it in the GEMM's epilogue (as PyTorch's bf16
  // Linear does) instead of an fp32 product, a separate bias pass and its rounding (kernels/gemm).
  const Tensor& b = c.b16.defined() && x.dtype() == DType::kBF16 ? c.b16 : c.b;  // [cout_s]
  Tensor y = cuda_linear(x.reshape({x.numel() / c.cin, c.cin}), c.w, b, x.dtype());  // one GEMM
  s.back() = c.cout_store;
  return y.reshape(s);
}

Tensor vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu) {
  Tensor y = Tensor::empty(x.shape(), x.is_cpu() ? DType::kF32 : x.dtype(), x.device());
  vae_rms_norm_into(x, gamma, silu, y);
  return y;
}

void vae_rms_norm_into(const Tensor& x, const Tensor& gamma, bool silu, Tensor& y) {
  if (!x.is_cpu()) return cuda_vae_rms_norm(x, gamma, silu, y);
  check_cpu_f32(x, "vae_rms_norm", "input");
  check_cpu_f32(gamma, "vae_rms_norm", "gamma");
  check_cpu_f32(y, "vae_rms_norm", "output");
  const int64_t C = x.dim(0);
  VGEN_ASSERT(gamma.numel() == C && y.numel() == x.numel(), "vae_rms_norm: gamma {} and output {} for input {}",
              gamma.str(), y.str(), x.str());
  kern::vae_rms_norm_ref(x.f32(), gamma.f32(), y.f32(), 1, C, C != 0 ? x.numel() / C : 0, silu);
}

namespace {

Tensor host_frame_attention(const Tensor& qkv, const Tensor& kv, int64_t C) {
  check_cpu_f32(qkv, "vae_frame_attention", "qkv");
  check_cpu_f32(kv, "vae_frame_attention", "kv");
  const int64_t T = qkv.dim(1), H = qkv.dim(2), W = qkv.dim(3), S = H * W, Sf = kv.dim(2) * kv.dim(3);
  VGEN_ASSERT(qkv.dim(0) == 3 * C && kv.dim(0) == 3 * C && kv.dim(1) == T,
              "vae_frame_attention: qkv {} and kv {} must be [3·{}, T, ...]", qkv.str(), kv.str(), C);
  Tensor q_t = Tensor::empty({S, C}, DType::kF32), k_t = Tensor::empty({Sf, C}, DType::kF32);
  Tensor v_t = Tensor::empty({Sf, C}, DType::kF32), o_t = Tensor::empty({S, C}, DType::kF32);
  Tensor attn = Tensor::empty({C, T, H, W}, DType::kF32);
  for (int64_t t = 0; t < T; ++t) {
    // Channel-major frame t of each part → token-major [S, C] for the attention kernel.
    Tensor q_c = Tensor::empty({C, S}, DType::kF32), k_c = Tensor::empty({C, Sf}, DType::kF32);
    Tensor v_c = Tensor::empty({C, Sf}, DType::kF32);
    for (int64_t c = 0; c < C; ++c) {
      std::memcpy(q_c.f32() + c * S, qkv.f32() + (c * T + t) * S, size_t(S) * sizeof(float));
      std::memcpy(k_c.f32() + c * Sf, kv.f32() + ((C + c) * T + t) * Sf, size_t(Sf) * sizeof(float));
      std::memcpy(v_c.f32() + c * Sf, kv.f32() + ((2 * C + c) * T + t) * Sf, size_t(Sf) * sizeof(float));
    }
    transpose_cs(q_c.f32(), q_t.f32(), C, S);
    transpose_cs(k_c.f32(), k_t.f32(), C, Sf);
    transpose_cs(v_c.f32(), v_t.f32(), C, Sf);
    kern::attention_ref(q_t.f32(), k_t.f32(), v_t.f32(), o_t.f32(), nullptr, 1, S, Sf, 1, C, Sf,
                        1.0f / std::sqrt(float(C)));
    transpose_cs(o_t.f32(), q_c.f32(), S, C);  // [C, S]
    for (int64_t c = 0; c < C; ++c)
      std::memcpy(attn.f32() + (c * T + t) * S, q_c.f32() + c * S, size_t(S) * sizeof(float));
  }
  return attn;
}

}  // namespace

Tensor vae_frame_attention(const Tensor& qkv, const Tensor& kv, int64_t C) {
  if (qkv.is_cpu()) return host_frame_attention(qkv, kv, C);
  const int64_t t = qkv.dim(0), H = qkv.dim(1), W = qkv.dim(2), S = H * W, Sf = kv.dim(1) * kv.dim(2);
  if (t == 1)
    return cuda_vae_frame_attention(qkv.reshape({S, 3 * C}), kv.reshape({Sf, 3 * C}), C).reshape({1, H, W, C});
  Tensor attn = Tensor::empty({t, H, W, C}, qkv.dtype(), qkv.device());
  for (int64_t f = 0; f < t; ++f) {
    Tensor o = cuda_vae_frame_attention(qkv[f].reshape({S, 3 * C}), kv[f].reshape({Sf, 3 * C}), C);
    Tensor dst = attn.narrow(f, 1);
    dst.copy_from(o);
  }
  return attn;
}

void add_(Tensor& y, const Tensor& x) {
  if (!y.is_cpu()) return cuda_vae_add_(y, x);
  check_cpu_f32(y, "add_", "output");
  check_cpu_f32(x, "add_", "input");
  VGEN_ASSERT(y.numel() == x.numel(), "add_: {} vs {}", y.str(), x.str());
  kern::add_inplace_ref(y.f32(), x.f32(), y.numel());
}

void clamp_(Tensor& t, float lo, float hi) {
  if (!t.is_cpu()) return cuda_vae_clamp_(t, lo, hi);
  check_cpu_f32(t, "clamp_", "tensor");
  kern::clamp_ref(t.f32(), t.f32(), t.numel(), lo, hi);
}

void vae_write_frames(const Tensor& x, int64_t C, float lo, float hi, Tensor& video, int64_t f0) {
  if (!x.is_cpu()) return cuda_vae_write_frames(x, C, lo, hi, video, f0);
  check_cpu_f32(x, "vae_write_frames", "input");
  check_cpu_f32(video, "vae_write_frames", "video");
  const int64_t f = x.dim(1), F = video.dim(1), plane = x.dim(2) * x.dim(3);
  VGEN_ASSERT(x.ndim() == 4 && video.ndim() == 4 && video.dim(0) == C && C <= x.dim(0) && video.dim(2) == x.dim(2) &&
                  video.dim(3) == x.dim(3) && f0 >= 0 && f0 + f <= F,
              "vae_write_frames: frames {} (channels [0, {})) at {} into video {}", x.str(), C, f0, video.str());
  for (int64_t c = 0; c < C; ++c)
    kern::clamp_ref(x.f32() + c * f * plane, video.f32() + (c * F + f0) * plane, f * plane, lo, hi);
}

void copy_2d(Device device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
  if (device != Device::kCPU) return cuda_copy_2d(dst, dpitch, src, spitch, width, height);
  for (size_t r = 0; r < height; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
}

void zero_2d(Device device, void* dst, size_t pitch, size_t width, size_t height) {
  if (device != Device::kCPU) return cuda_zero_2d(dst, pitch, width, height);
  for (size_t r = 0; r < height; ++r) std::memset(static_cast<char*>(dst) + r * pitch, 0, width);
}

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
