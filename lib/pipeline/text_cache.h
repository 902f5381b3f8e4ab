// Optional on-disk cache of prompt embeddings. An entry is keyed by a hash of (encoder identity,
// max_len, normalised prompt), where the identity is the encoder's (PromptEncoder::identity: its
// weights' files, its tokenizer's contents, where and in which precision it runs).
// Entries are safetensors files written atomically (temporary name + rename) holding the full key
// text (verified on load, so a hash collision is a miss) and the prompt's real rows. Unreadable or
// inconsistent entries are ignored with a warning and recomputed.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"
#include "model/model.h"

namespace vgen {

class TextCache {
 public:
  TextCache(std::string dir, std::string identity);
  const std::string& dir() const { return dir_; }
  std::string key_text(const std::string& cleaned_prompt, int max_len) const;
  std::string entry_path(const std::string& cleaned_prompt, int max_len) const;

  // prompt_embeds [max_len, hidden] of a cleaned prompt (rows past its length zero), or an
  // undefined tensor when there is no valid entry.
  Tensor load(const std::string& cleaned_prompt, int max_len, int64_t hidden) const;
  // prompt_embeds [max_len, hidden] with `length` real rows.
  void store(const std::string& cleaned_prompt, int max_len, const Tensor& prompt_embeds, int64_t length) const;

 private:
  std::string dir_, identity_;
};

// prompt_embeds [B, max_len, D] of raw prompts, served from `cache` where present (cache may be
// null: plain encoding); misses are encoded and stored. A prompt's rows are bit-identical whether
// they come from the cache or from the encoder, and whichever prompts miss with it (the encoder
// encodes each prompt by itself).
// `contexts` (empty, or one per prompt): what each prompt is encoded for (PromptEncoder::normalize_for).
Tensor encode_prompts_cached(const PromptEncoder& enc, const TextCache* cache, const std::vector<std::string>& prompts,
                             int max_len, const std::vector<PromptContext>& contexts = {});

}  // namespace vgen
