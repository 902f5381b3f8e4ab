#include "model/wan/vae/vae_encoder.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "dist/weight_stream.h"
#include "ops/vae_down_ops.h"

namespace vgen {

struct WanVaeEncoder::State {
  VaeConvCache conv_in, conv_out;
  std::vector<VaeLevelState> levels;
  VaeResState mid0, mid1;
};

WanVaeEncoder::WanVaeEncoder(const WanVaeConfig& cfg, const WanVaeOptions& opt) : cfg_(cfg), opt_(opt) {
  check_vae_options(opt);
  const int p = cfg.patch();
  VGEN_CHECK(cfg.in_channels % (p * p) == 0, ExitCode::kModel,
             "VAE encoder: in_channels {} is not a multiple of patch_size² = {}", cfg.in_channels, p * p);
  // Each chunk of 4 frames must give whole latent frames (diffusers' _encode chunks by 4).
  VGEN_CHECK(cfg.scale_factor_temporal >= 1 && 4 % cfg.scale_factor_temporal == 0, ExitCode::kModel,
             "VAE encoder: scale_factor_temporal {} does not divide the 4-frame chunks", cfg.scale_factor_temporal);
}

WanVaeEncoder::WanVaeEncoder(const WanVaeConfig& cfg, const WeightStore& ws, const WanVaeOptions& opt,
                             WeightStream* stream, int component)
    : WanVaeEncoder(cfg, opt) {
  weight_bytes_ = build_vae_weights(ws, opt.device, opt.dtype, stream, component,
                                    [this](VaeWeightSource& src) { build_vae_encoder_layers(cfg_, src, L_); });
}

WanVaeEncoder WanVaeEncoder::load(const std::string& vae_dir, const WanVaeOptions& opt) {
  WanVaeConfig cfg = load_wan_vae_config(vae_dir);
  WeightStore ws = WeightStore::open(vae_dir);
  return WanVaeEncoder(cfg, ws, opt);
}

std::shared_ptr<WanVaeEncoder> WanVaeEncoder::random(const WanVaeConfig& cfg, const WanVaeOptions& opt,
                                                     uint64_t seed, float std) {
  VGEN_CHECK(opt.device != Device::kCPU, ExitCode::kUsage, "VAE with random weights: device encoders only");
  std::shared_ptr<WanVaeEncoder> e(new WanVaeEncoder(cfg, opt));
  VaeWeightSource src(nullptr, -1, opt.dtype, seed, std);
  build_vae_encoder_layers(e->cfg_, src, e->L_);
  e->weight_bytes_ = src.bytes();
  return e;
}

Tensor WanVaeEncoder::encode_chunk(const Tensor& frames, State& st, VaeEncoderContext& ctx) const {
  const VaeRun r = run();
  const int64_t p = cfg_.patch();
  const Shape in_shape = vae_shape({cfg_.in_channels, frames.dim(1), frames.dim(2) / p, frames.dim(3) / p}, r.device);
  Tensor x = vae_conv(L_.conv_in, in_shape, &st.conv_in, r, ctx,
                      [&](Tensor& d) { vae_patchify_into(frames, p, d); });  // [d0, t, H/p, W/p]
  st.levels.resize(L_.levels.size());
  for (size_t i = 0; i < L_.levels.size(); ++i)
    x = vae_level_forward(L_.levels[i], x, st.levels[i], r, ctx);  // [d_{i+1}, t_i, H_i, W_i]
  x = vae_res_forward(L_.mid0, x, st.mid0, r, ctx);
  x = vae_attn_forward(L_.attn, x, ctx);
  x = vae_res_forward(L_.mid1, x, st.mid1, r, ctx);  // [top, t', h, w]
  Tensor y = vae_conv(L_.conv_out, x.shape(), &st.conv_out, r, ctx,
                      [&](Tensor& d) { vae_rms_norm_into(x, L_.norm_out, /*silu=*/true, d); });  // [2z, t', h, w]
  return vae_pointwise(L_.quant_conv, y);                                                         // [2z, t', h, w]
}

Shape WanVaeEncoder::moments_shape(const Tensor& video) const {
  const int64_t p = cfg_.patch(), s = vae_encoder_spatial_factor(cfg_);
  const int64_t in = cfg_.in_channels / (p * p);
  VGEN_CHECK(video.defined() && video.ndim() == 5 && video.dim(0) >= 1 && video.dim(1) == in &&
                 video.dtype() == DType::kF32,
             ExitCode::kInput, "VAE encode: video {} must be [B, {}, F, H, W] f32",
             video.defined() ? video.str() : std::string("undefined"), in);
  const int64_t F = video.dim(2), H = video.dim(3), W = video.dim(4);
  VGEN_CHECK(F >= 1 && (F - 1) % 4 == 0 && H >= s && W >= s && H % s == 0 && W % s == 0, ExitCode::kInput,
             "VAE encode: video {} needs 1 + 4k frames and a height and width that are multiples of {}", video.str(),
             s);
  return {video.dim(0), 2 * int64_t(cfg_.z_dim), vae_encoder_latent_frames(cfg_, F), H / s, W / s};
}

void WanVaeEncoder::encode_stream(const Tensor& video, VaeEncoderContext& ctx, const ChunkSink& emit) const {
  VGEN_ASSERT(video.ndim() == 4 && video.dtype() == DType::kF32,
              "VAE encode_stream: video part {} must be [in, F, H, W] f32", video.str());
  const int64_t F = video.dim(1);
  State st;
  int64_t t0 = 0;
  for (int64_t f0 = 0; f0 < F; f0 += f0 == 0 ? 1 : 4) {
    const int64_t n = std::min<int64_t>(f0 == 0 ? 1 : 4, F - f0);
    Tensor frames = vae_video_frames(video, f0, n);  // [in, n, H, W] on the video's device
    if (frames.device() != opt_.device) frames = frames.to(opt_.device);
    const Tensor y = encode_chunk(frames, st, ctx);  // [2z, t', h, w]
    emit(y, t0);
    t0 += vae_dims(y).t;
  }
}

Tensor WanVaeEncoder::encode_moments(const Tensor& video) const {
  const Shape ms = moments_shape(video);
  const int64_t z2 = ms[1];
  Tensor out = Tensor::empty(ms, DType::kF32, opt_.device);  // [B, 2z, T, h, w]
  const float inf = std::numeric_limits<float>::infinity();
  LocalEncoderContext ctx;
  for (int64_t b = 0; b < ms[0]; ++b) {
    Tensor ob = out[b];  // [2z, T, h, w]
    int64_t frames = 0;
    encode_stream(video[b], ctx, [&](const Tensor& y, int64_t t0) {
      vae_write_frames(y, z2, -inf, inf, ob, t0);
      frames = t0 + vae_dims(y).t;
    });
    VGEN_ASSERT(frames == ms[2], "VAE encode produced {} latent frames for {} frames", frames, video.dim(2));
  }
  return out;
}

Tensor WanVaeEncoder::encode_mode(const Tensor& video) const { return vae_posterior_mode(encode_moments(video)); }

Tensor vae_posterior_mode(const Tensor& moments) {
  Tensor m = moments.to(Device::kCPU).to(DType::kF32);  // [B, 2z, T, h, w]
  VGEN_CHECK(m.ndim() == 5 && m.dim(1) % 2 == 0, ExitCode::kInternal, "VAE moments {} must be [B, 2z, T, h, w]",
             m.str());
  const int64_t B = m.dim(0), z = m.dim(1) / 2, S = m.dim(2) * m.dim(3) * m.dim(4);
  Tensor mode = Tensor::empty({B, z, m.dim(2), m.dim(3), m.dim(4)}, DType::kF32);  // [B, z, T, h, w]
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(mode.f32() + b * z * S, m.f32() + b * 2 * z * S, size_t(z * S) * sizeof(float));
  return mode;
}

Tensor vae_posterior_logvar(const Tensor& moments) {
  Tensor m = moments.to(Device::kCPU).to(DType::kF32);  // [B, 2z, T, h, w]
  VGEN_CHECK(m.ndim() == 5 && m.dim(1) % 2 == 0, ExitCode::kInternal, "VAE moments {} must be [B, 2z, T, h, w]",
             m.str());
  const int64_t B = m.dim(0), z = m.dim(1) / 2, S = m.dim(2) * m.dim(3) * m.dim(4);
  Tensor lv = Tensor::empty({B, z, m.dim(2), m.dim(3), m.dim(4)}, DType::kF32);  // [B, z, T, h, w]
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < z * S; ++i)
      lv.f32()[b * z * S + i] = std::clamp(m.f32()[(b * 2 + 1) * z * S + i], -30.0f, 20.0f);
  return lv;
}

Tensor vae_normalize(const Tensor& latents, const WanVaeConfig& cfg) {
  VGEN_CHECK(latents.ndim() == 5 && latents.dim(1) == cfg.z_dim, ExitCode::kInput,
             "latents {} must be [B, {}, T, H, W]", latents.str(), cfg.z_dim);
  Tensor z = latents.to(Device::kCPU).to(DType::kF32).clone();
  const int64_t B = z.dim(0), C = z.dim(1), S = z.dim(2) * z.dim(3) * z.dim(4);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float inv = 1.0f / cfg.latents_std[size_t(c)], mean = cfg.latents_mean[size_t(c)];
      float* p = z.f32() + (b * C + c) * S;
      for (int64_t i = 0; i < S; ++i) p[i] = (p[i] - mean) * inv;
    }
  return z;
}

}  // namespace vgen
