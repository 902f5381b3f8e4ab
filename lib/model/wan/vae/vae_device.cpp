// Forward pass of the device VAE decoder (see vae_device.h); layer for layer the CPU decoder's
// (model/wan/vae/vae_layers.cpp, vae_decoder.cpp) in the channels-last layout, one frame at a time.
#include "model/wan/vae/vae_device.h"

#include "model/wan/vae/vae_device_layers.h"
#include "ops/device_ops.h"
#include "ops/vae_device_ops.h"

namespace vgen {

namespace {

// The last kt − 1 input frames of a causal conv (halo-extended); undefined = zeros (first chunk).
struct CausalCache {
  Tensor frames;
};

struct ResState {
  CausalCache c1, c2;
};

struct UpState {
  bool seen = false;  // diffusers' "Rep": the first chunk skips time_conv
  CausalCache cache;
};

using Fill = std::function<void(Tensor&)>;

// 1×1 conv as a GEMM: x [..., cin] → [..., cout_store].
Tensor pointwise(const VaeDevConv& c, const Tensor& x) {
  VGEN_ASSERT(x.dim(-1) == c.cin, "VAE 1x1 conv: input {} for {} input channels", x.str(), c.cin);
  Shape s = x.shape();
  Tensor y = cuda_linear(x.reshape({x.numel() / c.cin, c.cin}), c.w, c.b, x.dtype());
  s.back() = c.cout_store;
  return y.reshape(s);
}

// Causal conv over a chunk whose input `fill` writes ([t, H, W, cin] = in_shape): the conv input
// buffer holds [cache, chunk] (halo-extended by the context), the cache becomes its last kt − 1
// frames — exactly causal_conv of the CPU decoder. → [t, H, W, cout_store].
Tensor causal_conv(const VaeDevConv& c, const Shape& in_shape, DType dt, CausalCache* cache, bool cache_copy,
                   VaeDeviceContext& ctx, const Fill& fill) {
  VGEN_ASSERT(in_shape.size() == 4 && in_shape[3] == c.cin, "VAE conv: input {} for {} input channels",
              shape_str(in_shape), c.cin);
  VGEN_ASSERT(c.kh == c.kw && c.kh % 2 == 1, "VAE conv: kernel {}x{} must be square and odd", c.kh, c.kw);
  const int64_t keep = c.kt - 1, halo = (c.kh - 1) / 2;
  kern::Conv3dPad pad;
  Tensor buf = ctx.conv_input(in_shape, dt, halo, keep, fill, pad);  // [keep + t, H', W', cin]
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
  Tensor y = cuda_vae_conv3d(buf, c.w, c.b, pad);  // [t, H, W, cout_store]
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

Tensor res_forward(const VaeDevResBlock& r, const Tensor& x, ResState& st, bool copy, VaeDeviceContext& ctx) {
  const DType dt = x.dtype();
  Tensor h = r.has_shortcut ? pointwise(r.shortcut, x) : x;  // [t, H, W, out]
  Tensor y;
  {
    Tensor a = causal_conv(r.conv1, x.shape(), dt, &st.c1, copy, ctx,
                           [&](Tensor& d) { cuda_vae_rms_norm(x, r.norm1, /*silu=*/true, d); });
    y = causal_conv(r.conv2, a.shape(), dt, &st.c2, copy, ctx,
                    [&](Tensor& d) { cuda_vae_rms_norm(a, r.norm2, /*silu=*/true, d); });
  }
  cuda_vae_add_(y, h);
  return y;
}

Tensor attn_forward(const VaeDevAttn& A, const Tensor& x, VaeDeviceContext& ctx) {
  const int64_t C = A.dim, t = x.dim(0), H = x.dim(1), W = x.dim(2);
  Tensor qkv;  // [t, H, W, 3C]
  {
    Tensor xn = Tensor::empty(x.shape(), x.dtype(), Device::kCUDA);
    cuda_vae_rms_norm(x, A.norm, /*silu=*/false, xn);
    qkv = pointwise(A.to_qkv, xn);
  }
  // Keys and values cover the whole frame: gather them; queries stay local.
  Tensor kv = ctx.gather(qkv);  // [t, Hf, Wf, 3C]
  const int64_t S = H * W, Sf = kv.dim(1) * kv.dim(2);
  Tensor attn;
  if (t == 1) {
    attn = cuda_vae_frame_attention(qkv.reshape({S, 3 * C}), kv.reshape({Sf, 3 * C}), C).reshape({1, H, W, C});
  } else {
    attn = Tensor::empty({t, H, W, C}, x.dtype(), Device::kCUDA);
    for (int64_t f = 0; f < t; ++f) {
      Tensor o = cuda_vae_frame_attention(qkv[f].reshape({S, 3 * C}), kv[f].reshape({Sf, 3 * C}), C);
      Tensor dst = attn.narrow(f, 1);
      dst.copy_from(o);
    }
  }
  Tensor y = pointwise(A.proj, attn);  // [t, H, W, C]
  cuda_vae_add_(y, x);
  return y;
}

// upsample2d / upsample3d, one output frame at a time: optional causal time_conv (C → 2C, frame
// 2τ+k = channel half k of time_conv frame τ), nearest ×2 of that half, 3×3 Conv2d C → C/2; each
// result frame [1, 2H, 2W, C/2] goes to `next` before the following one is made.
void up_forward(const VaeDevUpsampler& u, const Tensor& x, UpState& st, bool copy, VaeDeviceContext& ctx,
                const std::function<void(const Tensor&)>& next) {
  const DType dt = x.dtype();
  const int64_t t = x.dim(0), H = x.dim(1), W = x.dim(2), C = x.dim(3);
  Tensor src = x;
  int64_t halves = 1;
  if (u.temporal) {
    if (!st.seen) {
      st.seen = true;  // first chunk: one frame in, one frame out
    } else {
      src = causal_conv(u.time_conv, x.shape(), dt, &st.cache, copy, ctx, [&](Tensor& d) { d.copy_from(x); });
      halves = 2;  // [t, H, W, 2C]
    }
  }
  for (int64_t f = 0; f < t; ++f) {
    const Tensor sf = src.narrow(f, 1);
    for (int64_t k = 0; k < halves; ++k) {
      Tensor y = causal_conv(u.resample, {1, 2 * H, 2 * W, C}, dt, nullptr, copy, ctx,
                             [&](Tensor& d) { cuda_vae_upsample2x(sf, k * C, C, d); });
      next(y);
    }
  }
}

}  // namespace

struct WanVaeDeviceDecoder::State {
  CausalCache conv_in, conv_out;
  ResState mid0, mid1;
  std::vector<std::vector<ResState>> up_res;
  std::vector<UpState> up;
};

Tensor LocalDeviceContext::conv_input(const Shape& shape, DType dt, int64_t halo, int64_t front, const Fill& fill,
                                      kern::Conv3dPad& pad) {
  Shape s = shape;
  s[0] += front;
  Tensor buf = Tensor::empty(s, dt, Device::kCUDA);  // [front + t, H, W, C]
  Tensor body = buf.narrow(front, shape[0]);
  fill(body);
  pad = {halo, halo, halo, halo};
  return buf;
}

WanVaeDeviceDecoder::WanVaeDeviceDecoder(const WanVaeConfig& cfg, const VaeDeviceOptions& opt)
    : cfg_(cfg), opt_(opt), L_(std::make_unique<Layers>()) {
  VGEN_CHECK(opt.dtype == DType::kF32 || opt.dtype == DType::kBF16, ExitCode::kUsage,
             "device VAE: compute dtype must be f32 or bf16, got {}", dtype_name(opt.dtype));
}

WanVaeDeviceDecoder::WanVaeDeviceDecoder(const WanVaeConfig& cfg, const WeightStore& ws, const VaeDeviceOptions& opt,
                                         WeightStream* stream, int component)
    : WanVaeDeviceDecoder(cfg, opt) {
  std::unique_ptr<WeightStream> own;
  if (!stream) {
    own = std::make_unique<WeightStream>(nullptr, nullptr);
    stream = own.get();
    component = stream->add_component("vae", ws);
  }
  VaeWeightSource src(stream, component, opt.dtype, 0, 0.0f);
  build_vae_device_layers(cfg_, src, *L_);
  weight_bytes_ = src.bytes();
  if (own) own->run();
}

WanVaeDeviceDecoder::~WanVaeDeviceDecoder() = default;

std::shared_ptr<WanVaeDeviceDecoder> WanVaeDeviceDecoder::load(const std::string& vae_dir,
                                                               const VaeDeviceOptions& opt) {
  WanVaeConfig cfg = load_wan_vae_config(vae_dir);
  WeightStore ws = WeightStore::open(vae_dir);
  return std::make_shared<WanVaeDeviceDecoder>(cfg, ws, opt);
}

std::shared_ptr<WanVaeDeviceDecoder> WanVaeDeviceDecoder::random(const WanVaeConfig& cfg, const VaeDeviceOptions& opt,
                                                                 uint64_t seed, float std) {
  std::shared_ptr<WanVaeDeviceDecoder> d(new WanVaeDeviceDecoder(cfg, opt));
  VaeWeightSource src(nullptr, -1, opt.dtype, seed, std);
  build_vae_device_layers(d->cfg_, src, *d->L_);
  d->weight_bytes_ = src.bytes();
  return d;
}

void WanVaeDeviceDecoder::run_block(size_t i, const Tensor& x, State& st, VaeDeviceContext& ctx,
                                    const FrameSink& emit, int64_t& frame) const {
  const Layers& L = *L_;
  const bool copy = opt_.cache_copy;
  Tensor h = x;
  for (size_t r = 0; r < L.up_res[i].size(); ++r) h = res_forward(L.up_res[i][r], h, st.up_res[i][r], copy, ctx);
  if (L.has_up[i]) {
    up_forward(L.up[i], h, st.up[i], copy, ctx,
               [&](const Tensor& y) { run_block(i + 1, y, st, ctx, emit, frame); });  // [1, 2H, 2W, C/2]
    return;
  }
  Tensor y = causal_conv(L.conv_out, h.shape(), h.dtype(), &st.conv_out, copy, ctx,
                         [&](Tensor& d) { cuda_vae_rms_norm(h, L.norm_out, /*silu=*/true, d); });  // [t, sH, sW, Cx]
  emit(y, frame);
  frame += y.dim(0);
}

void WanVaeDeviceDecoder::decode_stream(const Tensor& z, VaeDeviceContext& ctx, const FrameSink& emit) const {
  VGEN_CHECK(z.ndim() == 4 && z.dim(0) == cfg_.z_dim && z.dim(1) >= 1 && z.dim(2) >= 1 && z.dim(3) >= 1,
             ExitCode::kInput, "VAE decode: latents {} must be [{}, T, H, W] with T, H, W >= 1", z.str(),
             cfg_.z_dim);
  const Layers& L = *L_;
  const DType dt = opt_.dtype;
  const bool copy = opt_.cache_copy;
  const int64_t Z = z.dim(0), T = z.dim(1), H = z.dim(2), W = z.dim(3), S = H * W;
  // Latents channels-last on the host (small), then one upload in the compute dtype.
  Tensor zh = z.to(Device::kCPU).to(DType::kF32);  // [Z, T, H, W]
  Tensor zl = Tensor::empty({T, H, W, Z}, DType::kF32);
  for (int64_t c = 0; c < Z; ++c)
    for (int64_t p = 0; p < T * S; ++p) zl.f32()[p * Z + c] = zh.f32()[c * T * S + p];
  Tensor x_all = pointwise(L.post_quant_conv, zl.to(dt).to(Device::kCUDA));  // [T, H, W, Z] (1×1×1, whole clip)

  State st;
  st.up_res.resize(L.up_res.size());
  for (size_t i = 0; i < L.up_res.size(); ++i) st.up_res[i].resize(L.up_res[i].size());
  st.up.resize(L.up_res.size());
  int64_t frame = 0;
  for (int64_t i = 0; i < T; ++i) {
    const Tensor xi = x_all.narrow(i, 1);  // [1, H, W, Z]
    Tensor x = causal_conv(L.conv_in, xi.shape(), dt, &st.conv_in, copy, ctx, [&](Tensor& d) { d.copy_from(xi); });
    x = res_forward(L.mid0, x, st.mid0, copy, ctx);
    x = attn_forward(L.attn, x, ctx);
    x = res_forward(L.mid1, x, st.mid1, copy, ctx);  // [1, H, W, d0]
    run_block(0, x, st, ctx, emit, frame);
  }
  VGEN_ASSERT(frame == cfg_.output_frames(T), "device VAE decode produced {} frames for {} latent frames", frame, T);
}

Tensor WanVaeDeviceDecoder::decode(const Tensor& z) const {
  VGEN_CHECK(z.ndim() == 5 && z.dim(1) == cfg_.z_dim, ExitCode::kInput,
             "VAE decode: latents {} must be [B, {}, T, H, W]", z.str(), cfg_.z_dim);
  const int64_t B = z.dim(0), T = z.dim(2), s = cfg_.spatial_upscale(), C = cfg_.out_channels;
  Tensor video = Tensor::empty({B, C, cfg_.output_frames(T), s * z.dim(3), s * z.dim(4)}, DType::kF32,
                               Device::kCUDA);  // [B, C, F, sH, sW]
  LocalDeviceContext ctx;
  for (int64_t b = 0; b < B; ++b) {
    Tensor vb = video[b];  // [C, F, sH, sW]
    decode_stream(z[b], ctx, [&](const Tensor& y, int64_t f0) { cuda_vae_write_frames(y, C, -1.0f, 1.0f, vb, f0); });
  }
  return video;
}

}  // namespace vgen
