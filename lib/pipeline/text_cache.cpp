#include "pipeline/text_cache.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/log.h"
#include "io/safetensors.h"
#include "core/hash.h"

namespace vgen {
namespace fs = std::filesystem;

TextCache::TextCache(std::string dir, std::string identity) : dir_(std::move(dir)), identity_(std::move(identity)) {}

std::string TextCache::key_text(const std::string& cleaned_prompt, int max_len) const {
  return fmt::format("vgen-text-cache-v1\n{}\nmax_len={}\nprompt={}", identity_, max_len, cleaned_prompt);
}

std::string TextCache::entry_path(const std::string& cleaned_prompt, int max_len) const {
  return (fs::path(dir_) / (content_hash(key_text(cleaned_prompt, max_len)) + ".safetensors")).string();
}

Tensor TextCache::load(const std::string& cleaned_prompt, int max_len, int64_t hidden) const {
  std::string path = entry_path(cleaned_prompt, max_len);
  if (!fs::exists(path)) return {};
  try {
    WeightStore ws = WeightStore::open(path);
    VGEN_CHECK(ws.has("key") && ws.has("prompt_embeds"), ExitCode::kInput, "entry lacks 'key' or 'prompt_embeds'");
    Tensor key = ws.get("key");
    std::string want = key_text(cleaned_prompt, max_len);
    VGEN_CHECK(key.dtype() == DType::kU8, ExitCode::kInput, "'key' is not U8");
    if (size_t(key.numel()) != want.size() || std::memcmp(key.raw(), want.data(), want.size()) != 0)
      return {};  // another prompt with the same hash: a miss
    Tensor rows = ws.get("prompt_embeds");  // [n, D]
    VGEN_CHECK(rows.dtype() == DType::kF32 && rows.ndim() == 2 && rows.dim(1) == hidden && rows.dim(0) >= 1 &&
                   rows.dim(0) <= max_len,
               ExitCode::kInput, "prompt_embeds {} does not fit max_len {} and hidden {}", rows.str(), max_len, hidden);
    Tensor out = Tensor::zeros({int64_t(max_len), hidden}, DType::kF32);  // [L, D]
    out.narrow(0, rows.dim(0)).copy_from(rows);
    return out;
  } catch (const std::exception& e) {
    log_warn("text cache: ignoring unreadable entry {}: {}", path, e.what());
    return {};
  }
}

void TextCache::store(const std::string& cleaned_prompt, int max_len, const Tensor& prompt_embeds,
                      int64_t length) const {
  VGEN_ASSERT(prompt_embeds.ndim() == 2 && length >= 1 && length <= prompt_embeds.dim(0),
              "text cache: prompt_embeds {} with length {}", prompt_embeds.str(), length);
  std::string key = key_text(cleaned_prompt, max_len);
  Tensor k = Tensor::empty({int64_t(key.size())}, DType::kU8);
  std::memcpy(k.raw(), key.data(), key.size());
  try {
    fs::create_directories(dir_);
    save_safetensors(entry_path(cleaned_prompt, max_len),
                     {{"key", k}, {"prompt_embeds", prompt_embeds.narrow(0, length).clone()}});
  } catch (const std::exception& e) {
    log_warn("text cache: cannot store an entry in {}: {}", dir_, e.what());  // the cache is optional
  }
}

Tensor encode_prompts_cached(const PromptEncoder& enc, const TextCache* cache, const std::vector<std::string>& prompts,
                             int max_len, const std::vector<PromptContext>& contexts) {
  const int64_t B = int64_t(prompts.size()), L = max_len, D = enc.hidden_size();
  VGEN_ASSERT(contexts.empty() || contexts.size() == prompts.size(), "{} prompt contexts for {} prompts",
              contexts.size(), prompts.size());
  Tensor out = Tensor::empty({B, L, D}, DType::kF32);  // [B, L, D]
  std::vector<std::string> normalized;
  for (size_t b = 0; b < prompts.size(); ++b)
    normalized.push_back(contexts.empty() ? enc.normalize(prompts[b]) : enc.normalize_for(prompts[b], contexts[b]));
  std::vector<size_t> miss;
  for (size_t b = 0; b < normalized.size(); ++b) {
    Tensor hit = cache ? cache->load(normalized[b], max_len, D) : Tensor();
    if (hit.defined()) out[int64_t(b)].copy_from(hit);
    else miss.push_back(b);
  }
  if (miss.empty()) return out;
  std::vector<std::string> todo;
  for (size_t b : miss) todo.push_back(normalized[b]);
  PromptEmbeddings e = enc.encode_normalized(todo, max_len);
  for (size_t i = 0; i < miss.size(); ++i) {
    Tensor row = e.embeds[int64_t(i)];  // [L, D]
    out[int64_t(miss[i])].copy_from(row);
    if (cache) cache->store(todo[i], max_len, row, e.lengths[i]);
  }
  return out;
}

}  // namespace vgen
