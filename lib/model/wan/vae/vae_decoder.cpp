#include "model/wan/vae/vae_decoder.h"

#include <algorithm>

#include "dist/weight_stream.h"
#include "ops/vae_up_ops.h"

namespace vgen {

struct WanVaeDecoder::State {
  VaeConvCache conv_in, conv_out;
  VaeResState mid0, mid1;
  std::vector<std::vector<VaeResState>> up_res;
  std::vector<VaeUpState> up;
};

void check_vae_options(const WanVaeOptions& opt) {
  if (opt.device == Device::kCPU)
    VGEN_CHECK(opt.dtype == DType::kF32, ExitCode::kUsage, "host VAE: computes in f32, got {}", dtype_name(opt.dtype));
  else
    VGEN_CHECK(opt.dtype == DType::kF32 || opt.dtype == DType::kBF16, ExitCode::kUsage,
               "device VAE: compute dtype must be f32 or bf16, got {}", dtype_name(opt.dtype));
}

WanVaeDecoder::WanVaeDecoder(const WanVaeConfig& cfg, const WanVaeOptions& opt) : cfg_(cfg), opt_(opt) {
  check_vae_options(opt);
}

// The decoder's causal convs read their cached frames in place (ops/vae_ops.h ring mode) where the
// two extra rotations of the weight cost little: up to 32 MiB a weight, i.e. every conv but the
// 1024 × 1024 ones of the lowest levels, whose frames are small enough to copy.
constexpr size_t kVaeRingMaxWeightBytes = size_t(32) << 20;

WanVaeDecoder::WanVaeDecoder(const WanVaeConfig& cfg, const WeightStore& ws, const WanVaeOptions& opt,
                             WeightStream* stream, int component)
    : WanVaeDecoder(cfg, opt) {
  weight_bytes_ = build_vae_weights(ws, opt.device, opt.dtype, stream, component, [this](VaeWeightSource& src) {
    src.ring_weights_up_to(kVaeRingMaxWeightBytes);
    build_vae_layers(cfg_, src, L_);
  });
}

WanVaeDecoder WanVaeDecoder::load(const std::string& vae_dir, const WanVaeOptions& opt) {
  WanVaeConfig cfg = load_wan_vae_config(vae_dir);
  WeightStore ws = WeightStore::open(vae_dir);
  return WanVaeDecoder(cfg, ws, opt);
}

std::shared_ptr<WanVaeDecoder> WanVaeDecoder::random(const WanVaeConfig& cfg, const WanVaeOptions& opt,
                                                     uint64_t seed, float std) {
  VGEN_CHECK(opt.device != Device::kCPU, ExitCode::kUsage, "VAE with random weights: device decoders only");
  std::shared_ptr<WanVaeDecoder> d(new WanVaeDecoder(cfg, opt));
  VaeWeightSource src(nullptr, -1, opt.dtype, seed, std);
  src.ring_weights_up_to(kVaeRingMaxWeightBytes);
  build_vae_layers(d->cfg_, src, d->L_);
  d->weight_bytes_ = src.bytes();
  return d;
}

void WanVaeDecoder::run_block(size_t i, const Tensor& x, State& st, VaeSpatialContext& ctx, const FrameSink& emit,
                              int64_t& frame) const {
  const VaeRun r = run();
  Tensor h = x;  // [C, 1, H, W]
  for (size_t k = 0; k < L_.up_res[i].size(); ++k) h = vae_res_forward(L_.up_res[i][k], h, st.up_res[i][k], r, ctx);
  if (L_.has_up[i]) {
    auto next = [&](const Tensor& y) { run_block(i + 1, y, st, ctx, emit, frame); };  // [C', 1, 2H, 2W]
    if (L_.dup_up[i].cout > 0)
      vae_residual_up_forward(L_.up[i], L_.dup_up[i], x, h, st.up[i], r, ctx, next);
    else
      vae_up_forward(L_.up[i], h, st.up[i], r, ctx, next);
    return;
  }
  Tensor y = vae_conv(L_.conv_out, h.shape(), &st.conv_out, r, ctx,
                      [&](Tensor& d) { vae_rms_norm_into(h, L_.norm_out, /*silu=*/true, d); });  // [Cx, t, sH, sW]
  emit(y, frame);
  frame += vae_dims(y).t;
}

void WanVaeDecoder::decode_stream(const Tensor& z, VaeSpatialContext& ctx, const FrameSink& emit) const {
  VGEN_CHECK(z.ndim() == 4 && z.dim(0) == cfg_.z_dim && z.dim(1) >= 1 && z.dim(2) >= 1 && z.dim(3) >= 1,
             ExitCode::kInput, "VAE decode: latents {} must be [{}, T, H, W] with T, H, W >= 1", z.str(),
             cfg_.z_dim);
  const VaeRun r = run();
  const int64_t T = z.dim(1);
  Tensor x_all = vae_pointwise(L_.post_quant_conv, vae_latents_in(z, r.dtype, r.device));  // [Z, T, H, W] (whole clip)
  State st;
  st.up_res.resize(L_.up_res.size());
  for (size_t i = 0; i < L_.up_res.size(); ++i) st.up_res[i].resize(L_.up_res[i].size());
  st.up.resize(L_.up_res.size());
  int64_t frame = 0;
  for (int64_t i = 0; i < T; ++i) {
    const Tensor xi = vae_frames(x_all, i, 1);  // [Z, 1, H, W]
    Tensor x = vae_conv(L_.conv_in, xi.shape(), &st.conv_in, r, ctx, [&](Tensor& d) { d.copy_from(xi); });
    x = vae_res_forward(L_.mid0, x, st.mid0, r, ctx);
    x = vae_attn_forward(L_.attn, x, ctx);
    x = vae_res_forward(L_.mid1, x, st.mid1, r, ctx);  // [d0, 1, H, W]
    run_block(0, x, st, ctx, emit, frame);
  }
  VGEN_ASSERT(frame == cfg_.output_frames(T), "VAE decode produced {} frames for {} latent frames", frame, T);
}

Tensor WanVaeDecoder::decode(const Tensor& z) const {
  VGEN_CHECK(z.ndim() == 5 && z.dim(1) == cfg_.z_dim, ExitCode::kInput,
             "VAE decode: latents {} must be [B, {}, T, H, W]", z.str(), cfg_.z_dim);
  Tensor video = Tensor::empty(vae_video_shape(cfg_, z.shape()), DType::kF32, opt_.device);  // [B, C, F, sH, sW]
  LocalSpatialContext ctx;
  for (int64_t b = 0; b < z.dim(0); ++b) {
    Tensor vb = video[b];  // [C, F, sH, sW]
    decode_stream(z[b], ctx, [&](const Tensor& y, int64_t f0) { vae_write_video_frames(cfg_, y, vb, f0); });
  }
  return video;
}

Shape vae_video_shape(const WanVaeConfig& cfg, const Shape& z) {
  VGEN_ASSERT(z.size() == 5, "vae_video_shape: latents {} must be [B, C, T, H, W]", shape_str(z));
  const int64_t s = cfg.video_upscale();
  return {z[0], cfg.video_channels(), cfg.output_frames(z[2]), s * z[3], s * z[4]};
}

void vae_write_video_frames(const WanVaeConfig& cfg, const Tensor& frames, Tensor& video, int64_t f0) {
  if (cfg.patch() == 1) return vae_write_frames(frames, cfg.out_channels, -1.0f, 1.0f, video, f0);
  vae_write_frames_unpatchify(frames, cfg.video_channels(), cfg.patch(), -1.0f, 1.0f, video, f0);
}

Tensor vae_denormalize(const Tensor& latents, const WanVaeConfig& cfg) {
  VGEN_CHECK(latents.ndim() == 5 && latents.dim(1) == cfg.z_dim, ExitCode::kInput,
             "latents {} must be [B, {}, T, H, W]", latents.str(), cfg.z_dim);
  Tensor z = latents.to(Device::kCPU).to(DType::kF32).clone();
  const int64_t B = z.dim(0), C = z.dim(1), S = z.dim(2) * z.dim(3) * z.dim(4);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float inv = 1.0f / cfg.latents_std[size_t(c)], mean = cfg.latents_mean[size_t(c)];
      float* p = z.f32() + (b * C + c) * S;
      for (int64_t i = 0; i < S; ++i) p[i] = p[i] / inv + mean;
    }
  return z;
}

Tensor to_frames01(const Tensor& video) {
  VGEN_CHECK(video.ndim() == 5 && video.dim(1) == 3, ExitCode::kInternal, "to_frames01: video {} must be [B,3,F,H,W]",
             video.str());
  Tensor v = video.to(Device::kCPU).to(DType::kF32);
  const int64_t B = v.dim(0), F = v.dim(2), H = v.dim(3), W = v.dim(4), plane = H * W;
  Tensor out = Tensor::empty({B * F, H, W, 3}, DType::kF32);  // [B·F, H, W, 3]
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t c = 0; c < 3; ++c) {
        const float* src = v.f32() + ((b * 3 + c) * F + f) * plane;
        float* dst = out.f32() + (b * F + f) * plane * 3 + c;
        for (int64_t i = 0; i < plane; ++i) dst[i * 3] = std::clamp(src[i] * 0.5f + 0.5f, 0.0f, 1.0f);
      }
  return out;
}

}  // namespace vgen
