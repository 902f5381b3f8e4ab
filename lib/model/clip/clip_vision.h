// CLIP vision tower (transformers CLIPVisionModel, eval) up to what image-conditioned pipelines
// take: `hidden_states[-2]`, the output of the penultimate encoder layer. hidden_states[0] is the
// embeddings after pre_layrnorm and hidden_states[i] the output of layer i, so with L layers
// hidden_states[-2] is the output of layer L−1 (1-based): the last layer and post_layernorm never
// run, and their weights are not read.
//
// Forward: patch-embedding conv (kernel = stride = patch, no bias) as patchify + linear → class
// token prepended → + position embedding → pre_layrnorm → per layer: layer_norm1, self-attention
// (q/k/v/out_proj with biases, scale head_dim^-0.5), residual; layer_norm2, fc1, gelu or
// quick_gelu, fc2, residual.
//
// Written once against lib/ops (docs/adding_a_model.md): host f32 weights run the CPU references
// (the fp32 oracle); after to_device the same forward runs on the current GPU in the compute dtype.
#pragma once
#include <string>
#include <vector>

#include "config/attention_config.h"
#include "io/safetensors.h"
#include "model/clip/clip_vision_config.h"
#include "ops/linear_layer.h"

namespace vgen {

struct ClipVisionLayer {
  Tensor ln1_w, ln1_b;       // [D] f32 (on either device)
  LinearWeights q, k, v, o;  // w [D, D], b [D]
  Tensor ln2_w, ln2_b;       // [D] f32
  LinearWeights fc1;         // w [F, D], b [F]
  LinearWeights fc2;         // w [D, F], b [D]
};

class ClipVisionEncoder {
 public:
  // `dir` = the image_encoder folder (config.json + safetensors, single or sharded).
  static ClipVisionEncoder load(const std::string& dir);
  // Tensor names as transformers saves them, with or without the `vision_model.` prefix (older
  // transformers versions write it, e.g. the published Wan 2.1 I2V checkpoints); f32, bf16 or f16
  // files, converted to f32 here. `where` names the weights in errors (kModel).
  ClipVisionEncoder(const ClipVisionConfig& cfg, const WeightStore& weights, const std::string& where);

  // Moves the weights to the current CUDA device: linear weights, biases, class and position
  // embeddings in `dtype` (kBF16 or kF32), layer norms in f32 (the device norm's contract). Every
  // later forward runs there in `dtype`.
  void to_device(DType dtype);
  // The device attention kernels (attention_config: the backend and the key split); the host
  // ignores them.
  void set_attention(const AttentionConfig& attention) { attention_ = attention; }

  const ClipVisionConfig& config() const { return cfg_; }
  Device device() const { return device_; }
  DType dtype() const { return dtype_; }
  // Encoder layers the forward runs: num_hidden_layers − 1.
  int64_t num_layers_run() const { return int64_t(layers_.size()); }

  // pixel_values [B, C, H, W] f32 on either device (the image processor's output, H = W =
  // image_size) → hidden_states[-2] [B, 1 + num_patches, D] on this encoder's device, in its dtype.
  Tensor penultimate_hidden_states(const Tensor& pixel_values) const;

 private:
  Tensor embed(const Tensor& pixel_values) const;
  void layer_forward(const ClipVisionLayer& l, Tensor& x) const;

  ClipVisionConfig cfg_;
  Device device_ = Device::kCPU;
  DType dtype_ = DType::kF32;
  AttentionConfig attention_;
  LinearWeights patch_;         // w [D, C·P·P] (the conv weight [D, C, P, P] flattened), no bias
  Tensor class_emb_;            // [D]
  Tensor pos_emb_;              // [num_positions, D]
  Tensor pre_ln_w_, pre_ln_b_;  // [D] f32
  std::vector<ClipVisionLayer> layers_;
};

}  // namespace vgen
