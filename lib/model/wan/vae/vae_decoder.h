// Wan VAE decoder (AutoencoderKLWan.decode, wan_spec §5.3–5.4), one forward for the host fp32
// oracle and the GPU: post_quant_conv on the whole clip, then the decoder one frame at a time at
// every level — a latent frame through the mid block and up block 0, each frame an upsampler emits
// through the next block, and so on — so every causal conv sees [2 cached frames, 1 new frame] and
// activation memory does not grow with the number of frames (the per-frame order is exact: every
// conv after the first chunk is causal over frames, wan_spec §5.4); clamp to [-1, 1]. The Wan 2.2
// VAE (is_residual, patch_size) is the same walk with its residual up blocks (the DupUp3D
// shortcut, vae_layers.h) and the unpatchify of the output frames, chosen by the config.
//
// Device: activations channels-last (ops/vae_ops.h), so 1×1 convs are GEMMs and the 3×3(×3) convs
// run on cuDNN NDHWC / NHWC (kernels/conv3d/conv3d.cuh). Precision kF32 keeps everything fp32 (no
// TF32; validation against the host); kBF16 stores conv weights and activations in bf16 with fp32
// accumulation, norms computed in fp32 (gammas, biases fp32), one rounding per op. The cache of a
// causal conv is its last two input frames: by default a view of the conv's input buffer (no
// copy-out; the buffer of 3 frames stays alive), with cache_copy a copy of 2 frames.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_layers.h"

namespace vgen {

struct WanVaeOptions {
  Device device = Device::kCPU;  // kCUDA: weights and activations on the current GPU (CUDA builds only)
  DType dtype = DType::kF32;     // compute dtype: kF32 on the host; kF32 or kBF16 on the device
  bool cache_copy = false;       // device: causal caches as 2-frame copies (less memory, more copies)
  VaeConvPolicy conv;            // device: the convs' backend (a run keeps the default; tests force one)
};

// The options' device and dtype (kUsage): f32 on the host; f32 or bf16 on the device.
void check_vae_options(const WanVaeOptions& opt);

class WanVaeDecoder {
 public:
  // Weights of a VAE folder (config.json + safetensors); throws kModel on missing/misshaped tensors.
  static WanVaeDecoder load(const std::string& vae_dir, const WanVaeOptions& opt = {});
  // Host: the tensors of `ws` as f32. Device: without `stream` a stream of this rank alone reads the
  // weights here; with one, they are requested from its component `component` and in place once
  // stream->run() has returned.
  WanVaeDecoder(const WanVaeConfig& cfg, const WeightStore& ws, const WanVaeOptions& opt = {},
                WeightStream* stream = nullptr, int component = -1);
  // Random device weights of the config's shapes (benchmarks, warm-ups): every parameter N(0, std²),
  // like the diffusers peer benchmark's init.
  static std::shared_ptr<WanVaeDecoder> random(const WanVaeConfig& cfg, const WanVaeOptions& opt, uint64_t seed,
                                               float std = 0.02f);

  const WanVaeConfig& config() const { return cfg_; }
  const WanVaeOptions& options() const { return opt_; }
  size_t weight_bytes() const { return weight_bytes_; }

  // z [B, z_dim, T, H, W] already denormalised (any device, f32 / bf16) → video [B, video_channels,
  // F, s·H, s·W] f32 on the decoder's device in [-1, 1], F = 1 + 4·(T−1), s = video_upscale (8 for
  // Wan 2.1, 16 for Wan 2.2).
  Tensor decode(const Tensor& z) const;

  // One batch item, this rank's part z [z_dim, T, H, W] (any device) in the spatial context `ctx`
  // (collective when ctx is): calls emit(frames, first_frame) for every group of output frames in
  // order; frames are this rank's part in the device's layout (ops/vae_ops.h), not clamped, with
  // the decoder's out_channels first (device: more channels follow as padding), still patchified
  // (vae_write_video_frames unpatchifies). Nothing else is kept.
  using FrameSink = std::function<void(const Tensor& frames, int64_t first_frame)>;
  void decode_stream(const Tensor& z, VaeSpatialContext& ctx, const FrameSink& emit) const;

 private:
  struct State;
  WanVaeDecoder(const WanVaeConfig& cfg, const WanVaeOptions& opt);
  VaeRun run() const { return {opt_.device, opt_.dtype, opt_.cache_copy, opt_.conv}; }
  void run_block(size_t i, const Tensor& x, State& st, VaeSpatialContext& ctx, const FrameSink& emit,
                 int64_t& frame) const;

  WanVaeConfig cfg_;
  WanVaeOptions opt_;
  VaeDecoderLayers L_;
  size_t weight_bytes_ = 0;
};

// The video of latents z [B, z_dim, T, H, W]: [B, video_channels, F, s·H, s·W] (s = video_upscale).
Shape vae_video_shape(const WanVaeConfig& cfg, const Shape& z);
// Frames of decode_stream (the whole frame) clamped to [-1, 1], unpatchified when the config
// patchifies, into frames [f0, f0 + t) of video [video_channels, F, s·H, s·W] on their device.
void vae_write_video_frames(const WanVaeConfig& cfg, const Tensor& frames, Tensor& video, int64_t f0);

// Pipeline step before decode: z = latents / (1/std) + mean per channel (diffusers' arithmetic),
// latents [B, z_dim, T, H, W] f32.
Tensor vae_denormalize(const Tensor& latents, const WanVaeConfig& cfg);

// video [B, 3, F, H, W] in [-1, 1] → frames [B·F, H, W, 3] = clamp(v·0.5 + 0.5, 0, 1) (the MP4 writer's input;
// for B = 1 this is [F, H, W, 3]).
Tensor to_frames01(const Tensor& video);

}  // namespace vgen
