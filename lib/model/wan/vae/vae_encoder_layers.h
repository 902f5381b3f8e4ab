// Building blocks of the Wan VAE encoder (diffusers' WanEncoder3d, Wan 2.1 and the Wan 2.2 residual
// variant), one chunk of frames at a time with the causal feature caches, for the host fp32 oracle
// and the device encoder alike (activations in the device's layout, ops/vae_ops.h and
// ops/vae_down_ops.h). The residual blocks, the mid block and the causal convs are the decoder's
// (vae_layers.h).
#pragma once
#include <vector>

#include "model/wan/vae/vae_encoder_context.h"
#include "model/wan/vae/vae_layers.h"

namespace vgen {

// downsample2d / downsample3d: ZeroPad2d((0, 1, 0, 1)) + a 3×3 stride-2 Conv2d per frame, then (3d)
// a (3, 1, 1) stride-2 causal time_conv over [the previous chunk's last frame, this chunk].
struct VaeDownsampler {
  bool temporal = false;
  VaeConvWeights resample, time_conv;
};

// One level of the down path: its residual blocks (each optionally followed by an attention block,
// Wan 2.1's attn_scales), then the downsampler (all but the last level). Wan 2.2 (is_residual) adds
// the AvgDown3D shortcut of the level's input: factors (2 if the level downsamples in time, 2 if it
// downsamples in space), 1 and 1 on the last level (then the shortcut is the input itself).
struct VaeDownLevel {
  std::vector<VaeResBlock> res;
  std::vector<bool> has_attn;  // one per res block
  std::vector<VaeAttnBlock> attn;  // one per res block (used where has_attn)
  bool has_down = false;
  VaeDownsampler down;
  bool avg_shortcut = false;
  int64_t factor_t = 1, factor_s = 1;
};

struct VaeEncoderLayers {
  VaeConvWeights conv_in, conv_out, quant_conv;
  std::vector<VaeDownLevel> levels;
  VaeResBlock mid0, mid1;
  VaeAttnBlock attn;
  Tensor norm_out;
};

// Fills L with the encoder's weights (`encoder.*`, `quant_conv.*`) from `src`, in checkpoint order.
void build_vae_encoder_layers(const WanVaeConfig& cfg, VaeWeightSource& src, VaeEncoderLayers& L);

// Input channels of the encoder's conv_in (in_channels, which already counts the patch) and its
// spatial factor: 2^(len(dim_mult) − 1) · patch (8 for Wan 2.1, 16 for Wan 2.2).
int64_t vae_encoder_spatial_factor(const WanVaeConfig& cfg);
// Latent frames of F video frames: 1 + (F − 1) / 4 chunks, each giving one latent frame.
int64_t vae_encoder_latent_frames(const WanVaeConfig& cfg, int64_t frames);

struct VaeDownState {
  bool seen = false;  // the first chunk skips time_conv (diffusers' feat_cache[idx] is None)
  Tensor last;        // the last frame of the previous chunk after the spatial conv
};
struct VaeLevelState {
  std::vector<VaeResState> res;
  VaeDownState down;
};

// The downsampler over a chunk x [C, t, H, W] (this rank's part) → [C, t', H/2, W/2] (t' = t on the
// first chunk or without time_conv, else t/2).
Tensor vae_down_forward(const VaeDownsampler& d, const Tensor& x, VaeDownState& st, const VaeRun& run,
                        VaeEncoderContext& ctx);
// One level over a chunk.
Tensor vae_level_forward(const VaeDownLevel& l, const Tensor& x, VaeLevelState& st, const VaeRun& run,
                         VaeEncoderContext& ctx);

}  // namespace vgen
