// Cosmos 3 behind the model seam (model.h): the prompt side renders and tokenizes the prompt
// (prompt.h) and hands its token ids to the pipeline as one-column "embeddings"; the denoiser's
// prepare runs the understanding tower over them once per prompt (prefill) and every step's forward
// reuses that K/V. The mRoPE offset of the video follows each prompt's own length.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/cosmos3/prompt.h"
#include "model/cosmos3/transformer.h"
#include "model/model.h"

namespace vgen {

// A prompt's token ids as the pipeline carries them: [L, 1] f32 rows holding id + 1 (exact below
// 2^24, far above any vocabulary), zero rows after the prompt (padding, as the text cache pads).
Tensor cosmos3_ids_to_rows(const std::vector<int64_t>& ids, int max_len);
std::vector<int64_t> cosmos3_rows_to_ids(const Tensor& rows);  // [L, 1] → the ids before the first zero row

// The prompt side: normalize_for renders the conversation (templates and chat template) as the
// pipeline's tokenize_prompt does for the video of the context; encode_normalized tokenizes it and
// appends eos and <|vision_start|>.
class Cosmos3PromptEncoder final : public PromptEncoder {
 public:
  Cosmos3PromptEncoder(const std::string& pipeline_dir, const std::string& tokenizer_dir);
  int64_t hidden_size() const override { return 1; }
  std::string normalize(const std::string& prompt) const override;  // the default video context
  std::string normalize_for(const std::string& prompt, const PromptContext& ctx) const override;
  PromptEmbeddings encode_normalized(const std::vector<std::string>& prompts, int max_len) const override;
  std::string identity() const override { return identity_; }

 private:
  Cosmos3PromptTokenizer tok_;
  std::string identity_;
};

// The understanding tower's K/V of one prompt (Denoiser::prepare).
struct Cosmos3Conditioning final : Conditioning {
  Cosmos3PromptKv kv;
};

// The generation tower as a Denoiser. Its tokens are the velocity's padded 2×2 patches, computed
// whole on one rank (sequence parallelism is refused at recipe check time). A timestep [B, S] marks
// the tokens of clean latent frames (a known first frame) with 0: those frames take no timestep
// embedding and get zero velocity, as diffusers' condition mask.
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
