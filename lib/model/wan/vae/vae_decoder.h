// Wan 2.1 VAE decoder (AutoencoderKLWan.decode, wan_spec §5.3–5.4): post_quant_conv on the whole
// clip, then the decoder one latent frame at a time with the causal feature cache, clamp to [-1, 1].
// Activation memory is bounded by one chunk (≤ 4 output frames) plus 2 cached frames per conv,
// whatever the number of frames.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_layers.h"

namespace vgen {

class WanVaeDecoder {
 public:
  WanVaeDecoder(const WanVaeConfig& cfg, const WeightStore& ws);  // throws kModel on missing/misshaped tensors
  static WanVaeDecoder load(const std::string& vae_dir);          // config.json + safetensors of the folder
  const WanVaeConfig& config() const { return cfg_; }

  // z [B, z_dim, T, H, W] already denormalised (f32, CPU) → video [B, out_channels, F, s·H, s·W] in
  // [-1, 1], F = 1 + 4·(T−1), s = 8 for Wan 2.1.
  Tensor decode(const Tensor& z) const;

  // One batch item, this rank's part z [z_dim, T, H, W] in the spatial context `ctx` (collective
  // when ctx is): calls `emit(frames [out_channels, f, s·H, s·W] clamped, first_frame_index)` once per
  // latent frame, in order. Nothing else of the video is kept.
  using FrameSink = std::function<void(const Tensor& frames, int64_t first_frame)>;
  void decode_stream(const Tensor& z, VaeSpatialContext& ctx, const FrameSink& emit) const;

 private:
  struct State;
  Tensor decode_chunk(const Tensor& x, State& st, VaeSpatialContext& ctx) const;  // [z, 1, H, W] → [out, f, sH, sW]

  WanVaeConfig cfg_;
  VaeConv post_quant_conv_, conv_in_, conv_out_;
  VaeResBlock mid_res0_, mid_res1_;
  VaeAttnBlock mid_attn_;
  std::vector<std::vector<VaeResBlock>> up_res_;  // [block][resnet]
  std::vector<bool> has_upsampler_;
  std::vector<VaeUpsampler> upsamplers_;  // one per block (unused entries where has_upsampler_ is false)
  Tensor norm_out_;
};

// Pipeline step before decode: z = latents / (1/std) + mean per channel (diffusers' arithmetic),
// latents [B, z_dim, T, H, W] f32.
Tensor vae_denormalize(const Tensor& latents, const WanVaeConfig& cfg);

// video [B, 3, F, H, W] in [-1, 1] → frames [B·F, H, W, 3] = clamp(v·0.5 + 0.5, 0, 1) (the MP4 writer's input;
// for B = 1 this is [F, H, W, 3]).
Tensor to_frames01(const Tensor& video);

}  // namespace vgen
