// Cosmos 3's prompt side behind the model seam (model.h PromptEncoder): there is no text encoder;
// the prompt is rendered and tokenized (prompt.h) and its token ids travel to the denoiser as
// one-column "embeddings" (denoiser.h prefills them).
#pragma once
#include <string>
#include <vector>

#include "model/cosmos3/prompt.h"
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

}  // namespace vgen
