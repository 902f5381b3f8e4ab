// Wan VAE encoder (AutoencoderKLWan._encode with diffusers' WanEncoder3d, Wan 2.1 and the Wan 2.2
// residual / patchified variant), one forward for the host fp32 oracle and the GPU: the video is
// patchified (Wan 2.2) and run chunk by chunk — the first frame alone, then 4 frames at a time —
// through the encoder with every causal conv's feature cache carried between chunks (zeros in front
// of the first), the downsamplers' time_conv skipped on the first chunk and fed the previous chunk's
// last frame afterwards, AvgDown3D's zero frames in front of each chunk, then quant_conv. Each chunk
// gives 4 / scale_factor_temporal latent frames (the first one), so activation memory does not grow
// with the number of frames; on the device a host video is uploaded one chunk at a time.
//
// Device: the decoder's layout and precision rules (vae_decoder.h): activations channels-last,
// kF32 fp32 throughout (the validation precision), kBF16 bf16 weights and activations with fp32
// accumulation and norms. The moments are fp32 either way.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_encoder_layers.h"

namespace vgen {

class WanVaeEncoder {
 public:
  // Weights of a VAE folder (config.json + safetensors); throws kModel on missing/misshaped tensors.
  static WanVaeEncoder load(const std::string& vae_dir, const WanVaeOptions& opt = {});
  // Host: the tensors of `ws` as f32. Device: without `stream` a stream of this rank alone reads the
  // weights here; with one, they are requested from its component `component` and in place once
  // stream->run() has returned (as WanVaeDecoder).
  WanVaeEncoder(const WanVaeConfig& cfg, const WeightStore& ws, const WanVaeOptions& opt = {},
                WeightStream* stream = nullptr, int component = -1);
  // Random device weights of the config's shapes (benchmarks, warm-ups), N(0, std²) each.
  static std::shared_ptr<WanVaeEncoder> random(const WanVaeConfig& cfg, const WanVaeOptions& opt, uint64_t seed,
                                               float std = 0.02f);

  const WanVaeConfig& config() const { return cfg_; }
  const WanVaeOptions& options() const { return opt_; }
  size_t weight_bytes() const { return weight_bytes_; }

  // video [1, in, F, H, W] f32 in [-1, 1] (host or device; in = in_channels / patch², F = 1 + 4k,
  // H and W multiples of the spatial factor, vae_encoder_spatial_factor) → the posterior's
  // parameters [1, 2·z_dim, T, H/s, W/s] f32 on the encoder's device: mean then logvar (before the
  // posterior's clamp of logvar to [-30, 20]), T = vae_encoder_latent_frames.
  Tensor encode_moments(const Tensor& video) const;
  // The posterior's mode (= its mean, the pipelines' sample_mode "argmax") [1, z_dim, T, h, w] f32 on
  // the host, not normalised.
  Tensor encode_mode(const Tensor& video) const;

  // One batch item, this rank's part of the video [in, F, H, W] (any device, f32) in the context
  // `ctx` (collective when ctx is): calls emit(moments, first_latent_frame) for every chunk in order,
  // moments this rank's part of quant_conv's output in the device's layout (ops/vae_ops.h).
  using ChunkSink = std::function<void(const Tensor& moments, int64_t first_latent_frame)>;
  void encode_stream(const Tensor& video, VaeEncoderContext& ctx, const ChunkSink& emit) const;
  // Checks video [B, in, F, H, W] (kInput) and returns the moments' shape [B, 2·z_dim, T, H/s, W/s].
  Shape moments_shape(const Tensor& video) const;

 private:
  struct State;
  WanVaeEncoder(const WanVaeConfig& cfg, const WanVaeOptions& opt);
  VaeRun run() const { return {opt_.device, opt_.dtype, opt_.cache_copy}; }
  // One chunk of video frames [in, t, H, W] f32 on the encoder's device → quant_conv's output
  // [2z, t', h, w] in the device's layout.
  Tensor encode_chunk(const Tensor& frames, State& st, VaeEncoderContext& ctx) const;

  WanVaeConfig cfg_;
  WanVaeOptions opt_;
  VaeEncoderLayers L_;
  size_t weight_bytes_ = 0;
};

// Pipeline step after encode: (latents − mean) · (1 / std) per channel with 1 / std rounded to f32
// first (diffusers' arithmetic), latents [B, z_dim, T, H, W] → f32 on the host. The mirror of
// vae_denormalize.
Tensor vae_normalize(const Tensor& latents, const WanVaeConfig& cfg);

// The posterior's mode (its mean, the moments' first half) [B, z_dim, T, h, w] f32 on the host.
Tensor vae_posterior_mode(const Tensor& moments);
// The posterior's logvar as diffusers' DiagonalGaussianDistribution keeps it: clamp to [-30, 20] of
// the moments' second half → [1, z_dim, T, h, w] f32 on the host.
Tensor vae_posterior_logvar(const Tensor& moments);

}  // namespace vgen
