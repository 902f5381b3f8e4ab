// The pipeline's text side (WanPipeline._get_t5_prompt_embeds): prompt_clean → T5 tokenizer
// (max_length padding, truncation, EOS) → UMT5 encoder → prompt_embeds with every row past the
// prompt's length set to zero. The encoder runs on the CPU in fp32, or on the GPU (CUDA builds) in
// the compute dtype given by TextEncoderOptions; the result is host f32 either way.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/tensor.h"
#include "model/model.h"
#include "model/text/tokenizer.h"
#include "model/wan/text/umt5.h"

namespace vgen {

class WeightStream;  // dist/weight_stream.h

struct TextEncoderOptions {
  Device device = Device::kCPU;  // kCUDA: the encoder runs on the current GPU (CUDA builds only)
  DType dtype = DType::kF32;     // compute dtype on the device: kBF16 or kF32 (the host path is fp32)
  // The text_encoder weights already opened (null: opened from the folder). With `stream`, the
  // device encoder's weights are requested from its component `stream_component` (in place once
  // stream->run() returns); the host encoder reads `weights` as they are.
  const WeightStore* weights = nullptr;
  WeightStream* stream = nullptr;
  int stream_component = -1;
};

struct TextEncoding {
  std::vector<std::string> cleaned_prompts;
  std::vector<int64_t> lengths;  // real tokens per prompt (incl. EOS)
  Tensor input_ids;              // [B, L] i64
  Tensor attention_mask;         // [B, L] i64
  Tensor last_hidden_state;      // [B, L, D] f32; defined only when encode(..., with_padded_rows = true)
  Tensor prompt_embeds;          // [B, L, D] f32, rows ≥ lengths[b] are exactly zero
};

class TextEncoder final : public PromptEncoder {
 public:
  // A Diffusers pipeline directory (uses its text_encoder/ and tokenizer/ components).
  explicit TextEncoder(const std::string& model_dir, const TextEncoderOptions& options = {});
  TextEncoder(const std::string& text_encoder_dir, const std::string& tokenizer_dir,
              const TextEncoderOptions& options = {});
  ~TextEncoder() override;
  TextEncoder(TextEncoder&&) noexcept;
  TextEncoder& operator=(TextEncoder&&) noexcept;

  // Cleans, tokenizes to max_len and encodes. The encoder runs on the real tokens only (padded
  // keys are masked, so their rows do not change the result); with_padded_rows = true also
  // computes the encoder output at the padded positions, as transformers returns it in
  // last_hidden_state (costs max_len rows per prompt). Each prompt is encoded by itself, so its
  // embeddings are bit-identical whatever else is in `prompts` (for a given with_padded_rows).
  TextEncoding encode(const std::vector<std::string>& prompts, int max_len, bool with_padded_rows = false) const;
  // Same for already cleaned prompts (no cleaning step).
  TextEncoding encode_cleaned(const std::vector<std::string>& cleaned, int max_len, bool with_padded_rows) const;

  const T5Tokenizer& tokenizer() const { return *tokenizer_; }
  const Umt5Encoder& encoder() const { return *encoder_; }
  const Umt5Config& config() const { return cfg_; }
  int64_t hidden_size() const override { return cfg_.d_model; }
  // The seam (model.h PromptEncoder): prompt_clean, encode_cleaned without the padded rows, and
  // the identity of the text cache.
  std::string normalize(const std::string& prompt) const override;
  PromptEmbeddings encode_normalized(const std::vector<std::string>& prompts, int max_len) const override;
  std::string identity() const override;
  const TextEncoderOptions& options() const { return options_; }
  // Where and in which precision the encoder runs: "cpu-f32", "cuda-bf16" or "cuda-f32" (part of
  // identity(), so embeddings of different encoders are never mixed).
  std::string backend() const;
  const std::string& text_encoder_dir() const { return text_encoder_dir_; }
  const std::string& tokenizer_dir() const { return tokenizer_dir_; }

  // Bytes to hold the encoder weights in `dt` plus the activations of one prompt of max_len tokens
  // (for `vgen plan`; no weights are read). UMT5-XXL: 5,680,910,336 parameters.
  static size_t estimate_bytes(const Json& text_encoder_config, DType dt, int max_len = 512);

 private:
  std::string text_encoder_dir_, tokenizer_dir_;
  TextEncoderOptions options_;
  Umt5Config cfg_;
  std::unique_ptr<T5Tokenizer> tokenizer_;
  std::unique_ptr<Umt5Encoder> encoder_;
};

// The identity of an encoder folder and tokenizer pair: the folder's path, file names, sizes and
// mtimes, and the tokenizer files' contents (spiece.model, tokenizer_config.json,
// special_tokens_map.json hashed). TextEncoder::identity adds ";backend=" + backend().
std::string wan_text_identity(const std::string& text_encoder_dir, const std::string& tokenizer_dir);

}  // namespace vgen
