// Cosmos 3's prompt as diffusers' Cosmos3OmniPipeline.tokenize_prompt makes it (there is no separate
// text encoder: the joint transformer reads the token ids). The prompt gets the duration sentence
// (videos only, unless add_duration_template is off) and the resolution sentence (unless
// add_resolution_template is off) appended, the negative prompt their inverse ("is not ..."); each
// becomes a conversation [system prompt (image or video one, on by default), user text] rendered
// by the checkpoint's chat template with the generation prompt, tokenized, and followed by the eos
// id and <|vision_start|>. num_frames 1 is an image.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/text/bpe_tokenizer.h"
#include "model/text/qwen_chat_template.h"

namespace vgen {

struct Cosmos3PromptOptions {
  int64_t num_frames = 189;
  int64_t height = 720;
  int64_t width = 1280;
  double fps = 24.0;
  std::optional<bool> use_system_prompt;  // unset: the pipeline's default_use_system_prompt
  bool add_resolution_template = true;
  bool add_duration_template = true;
};

struct Cosmos3PromptTokens {
  std::string text;           // the rendered conversation (before eos and <|vision_start|>)
  std::vector<int64_t> ids;   // its tokens, then eos and <|vision_start|>
};

struct Cosmos3Prompts {
  Cosmos3PromptTokens cond;    // the prompt
  Cosmos3PromptTokens uncond;  // the negative prompt ("" when none)
};

// model_index.json's `default_use_system_prompt` in the pipeline folder (true when absent, the
// pipeline's default).
bool cosmos3_default_use_system_prompt(const std::string& pipeline_dir);

class Cosmos3PromptTokenizer {
 public:
  // `tokenizer_dir` is the checkpoint's text_tokenizer/ (tokenizer.json, tokenizer_config.json and
  // its chat template). Throws kModel naming the file for a missing or unsupported part.
  explicit Cosmos3PromptTokenizer(const std::string& tokenizer_dir, bool default_use_system_prompt = true);

  // Throws kRecipe for options the pipeline cannot format (num_frames < 1, fps not > 0, sizes < 1).
  Cosmos3Prompts tokenize(const std::string& prompt, const std::optional<std::string>& negative_prompt,
                          const Cosmos3PromptOptions& opts) const;

  // The user message: `text` with the templates (their inverse when `negative`) appended.
  static std::string augment(const std::string& text, bool negative, const Cosmos3PromptOptions& opts);

  int64_t eos_id() const { return eos_id_; }
  int64_t vision_start_id() const { return vision_start_id_; }
  const BpeTokenizer& tokenizer() const { return tok_; }

 private:
  Cosmos3PromptTokens render(const std::string& user_text, bool image, bool system_prompt) const;

  BpeTokenizer tok_;
  ChatTemplateKind template_;
  bool default_use_system_prompt_;
  int64_t eos_id_ = -1;
  int64_t vision_start_id_ = -1;
};

}  // namespace vgen
