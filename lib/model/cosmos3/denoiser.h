// Cosmos 3's denoiser behind the model seam (model.h): prepare runs the understanding tower over a
// prompt's token ids (prompt_encoder.h) once per prompt (prefill) and every step's forward reuses
// that K/V. The mRoPE offset of the video follows each prompt's own length.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/cosmos3/transformer.h"
#include "model/model.h"

namespace vgen {

// The understanding tower's K/V of one prompt (Denoiser::prepare).
struct Cosmos3Conditioning final : Conditioning {
  Cosmos3PromptKv kv;
};

// The generation tower as a Denoiser. Its tokens are the velocity's padded 2×2 patches, sharded over
// the sequence-parallel group as Wan's (the prompt K/V whole on every rank, the prefix of the
// mesh's attention). A timestep [B, S] marks the tokens of clean latent frames (a known first
// frame) with 0: those frames take no timestep embedding and get zero velocity, as diffusers'
// condition mask.
class Cosmos3Denoiser final : public Denoiser {
 public:
  // fps: the output's frame rate (the mRoPE time axis); temporal_compression: the VAE's; device:
  // where the model's weights are.
  Cosmos3Denoiser(std::shared_ptr<const Cosmos3Transformer> model, double fps, int temporal_compression,
                  Device device);
  int64_t num_tokens(const Shape& latents_shape) const override;
  int64_t out_channels() const override { return model_->config().latent_channel; }
  std::unique_ptr<Conditioning> prepare(const Tensor& prompt_embeds, const Tensor& image_tokens) const override;
  Tensor forward_local(const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                       const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                       const StepPolicy& step) const override;
  Tensor unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const override;
  bool on_device() const override;

 private:
  std::shared_ptr<const Cosmos3Transformer> model_;
  double fps_;
  int temporal_compression_;
  Device device_;
};

}  // namespace vgen
