#include "model/wan/vae/vae_decoder.h"

#include <algorithm>
#include <cstring>

namespace vgen {

struct WanVaeDecoder::State {
  Tensor conv_in, conv_out;
  VaeResBlock::State mid0, mid1;
  std::vector<std::vector<VaeResBlock::State>> up_res;
  std::vector<VaeUpsampler::State> up;
};

WanVaeDecoder::WanVaeDecoder(const WanVaeConfig& cfg, const WeightStore& ws) : cfg_(cfg) {
  const int64_t z = cfg.z_dim;
  const std::vector<int> dims = cfg.decoder_dims();  // [d0, ..., dn]
  const std::vector<bool> tup = cfg.temperal_upsample();
  const int nb = cfg.num_up_blocks();
  post_quant_conv_ = VaeConv::load(ws, "post_quant_conv", z, z, 1, 1, 1);
  conv_in_ = VaeConv::load(ws, "decoder.conv_in", dims[0], z, 3, 3, 3);
  mid_res0_ = VaeResBlock::load(ws, "decoder.mid_block.resnets.0", dims[0], dims[0]);
  mid_attn_ = VaeAttnBlock::load(ws, "decoder.mid_block.attentions.0", dims[0]);
  mid_res1_ = VaeResBlock::load(ws, "decoder.mid_block.resnets.1", dims[0], dims[0]);
  up_res_.resize(size_t(nb));
  has_upsampler_.assign(size_t(nb), false);
  upsamplers_.resize(size_t(nb));
  for (int i = 0; i < nb; ++i) {
    // Wan 2.1: block i > 0 takes the previous upsampler's output, half of dims[i].
    int64_t in = i > 0 ? dims[size_t(i)] / 2 : dims[0];
    const int64_t out = dims[size_t(i) + 1];
    const std::string p = "decoder.up_blocks." + std::to_string(i);
    for (int r = 0; r < cfg.num_res_blocks + 1; ++r) {
      up_res_[size_t(i)].push_back(VaeResBlock::load(ws, p + ".resnets." + std::to_string(r), in, out));
      in = out;
    }
    if (i != nb - 1) {
      has_upsampler_[size_t(i)] = true;
      upsamplers_[size_t(i)] = VaeUpsampler::load(ws, p + ".upsamplers.0", out, tup[size_t(i)]);
    }
  }
  norm_out_ = ws.get_f32("decoder.norm_out.gamma", {dims.back(), 1, 1, 1});
  conv_out_ = VaeConv::load(ws, "decoder.conv_out", cfg.out_channels, dims.back(), 3, 3, 3);
}

WanVaeDecoder WanVaeDecoder::load(const std::string& vae_dir) {
  WanVaeConfig cfg = load_wan_vae_config(vae_dir);
  WeightStore ws = WeightStore::open(vae_dir);
  return WanVaeDecoder(cfg, ws);
}

Tensor WanVaeDecoder::decode_chunk(const Tensor& x0, State& st, VaeSpatialContext& ctx) const {
  Tensor x = causal_conv(conv_in_, x0, st.conv_in, ctx);  // [d0, 1, H, W]
  x = mid_res0_.forward(x, st.mid0, ctx);
  x = mid_attn_.forward(x, ctx);
  x = mid_res1_.forward(x, st.mid1, ctx);  // [d0, 1, H, W]
  for (size_t i = 0; i < up_res_.size(); ++i) {
    for (size_t r = 0; r < up_res_[i].size(); ++r) x = up_res_[i][r].forward(x, st.up_res[i][r], ctx);
    if (has_upsampler_[i]) x = upsamplers_[i].forward(x, st.up[i], ctx);  // [d/2, t·(1|2), 2H, 2W]
  }
  x = vae_rms_norm(x, norm_out_, /*silu=*/true);
  return causal_conv(conv_out_, x, st.conv_out, ctx);  // [out, f, sH, sW]
}

void WanVaeDecoder::decode_stream(const Tensor& z, VaeSpatialContext& ctx, const FrameSink& emit) const {
  VGEN_CHECK(z.ndim() == 4 && z.dim(0) == cfg_.z_dim && z.dim(1) >= 1 && z.dim(2) >= 1 && z.dim(3) >= 1,
             ExitCode::kInput, "VAE decode: latents {} must be [{}, T, H, W] with T, H, W >= 1", z.str(),
             cfg_.z_dim);
  Tensor zf = z.to(Device::kCPU).to(DType::kF32);  // [z, T, H, W]
  Tensor unused;
  Tensor x = causal_conv(post_quant_conv_, zf, unused, ctx);  // [z, T, H, W] (1×1×1, whole clip)
  State st;
  st.up_res.resize(up_res_.size());
  for (size_t i = 0; i < up_res_.size(); ++i) st.up_res[i].resize(up_res_[i].size());
  st.up.resize(up_res_.size());
  int64_t frame = 0;
  for (int64_t i = 0; i < x.dim(1); ++i) {
    Tensor y = decode_chunk(slice_time(x, i, 1), st, ctx);  // [out, f, sH, sW]
    clamp_(y, -1.0f, 1.0f);
    emit(y, frame);
    frame += y.dim(1);
  }
  VGEN_ASSERT(frame == cfg_.output_frames(x.dim(1)), "VAE decode produced {} frames for {} latent frames", frame,
              x.dim(1));
}

Tensor WanVaeDecoder::decode(const Tensor& z) const {
  VGEN_CHECK(z.ndim() == 5 && z.dim(1) == cfg_.z_dim, ExitCode::kInput,
             "VAE decode: latents {} must be [B, {}, T, H, W]", z.str(), cfg_.z_dim);
  const int64_t B = z.dim(0), T = z.dim(2), s = cfg_.spatial_upscale();
  const int64_t F = cfg_.output_frames(T), Ho = s * z.dim(3), Wo = s * z.dim(4), C = cfg_.out_channels;
  Tensor video = Tensor::empty({B, C, F, Ho, Wo}, DType::kF32);  // [B, C, F, sH, sW]
  LocalSpatialContext ctx;
  for (int64_t b = 0; b < B; ++b) {
    float* vb = video.f32() + b * C * F * Ho * Wo;
    decode_stream(z[b], ctx, [&](const Tensor& y, int64_t f0) {
      const int64_t f = y.dim(1), plane = Ho * Wo;
      for (int64_t c = 0; c < C; ++c)
        std::memcpy(vb + (c * F + f0) * plane, y.f32() + c * f * plane, size_t(f * plane) * sizeof(float));
    });
  }
  return video;
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
