#include "model/cosmos3/prompt_encoder.h"

#include <filesystem>

#include "core/hash.h"

namespace vgen {
namespace fs = std::filesystem;

Tensor cosmos3_ids_to_rows(const std::vector<int64_t>& ids, int max_len) {
  VGEN_CHECK(int64_t(ids.size()) <= max_len, ExitCode::kInput,
             "the Cosmos 3 prompt has {} tokens, more than generation.max_sequence_length {} (it is not truncated)",
             ids.size(), max_len);
  Tensor rows = Tensor::zeros({int64_t(max_len), 1}, DType::kF32);  // [L, 1]
  for (size_t i = 0; i < ids.size(); ++i) {
    VGEN_CHECK(ids[i] >= 0 && ids[i] < (int64_t(1) << 24) - 1, ExitCode::kInternal, "token id {} out of range",
               ids[i]);
    rows.f32()[i] = float(ids[i] + 1);
  }
  return rows;
}

std::vector<int64_t> cosmos3_rows_to_ids(const Tensor& rows) {
  VGEN_ASSERT(rows.ndim() == 2 && rows.dim(1) == 1 && rows.dtype() == DType::kF32 && rows.is_cpu(),
              "cosmos3 prompt rows {} are not [L, 1] host f32", rows.str());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < rows.dim(0) && rows.f32()[i] != 0.0f; ++i) ids.push_back(int64_t(rows.f32()[i]) - 1);
  return ids;
}

namespace {

// What changes the ids: the tokenizer's files and the pipeline's default system prompt.
std::string tokenizer_identity(const std::string& pipeline_dir, const std::string& tokenizer_dir) {
  std::string id = "cosmos3-prompt-ids;";
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"})
    id += fmt::format("{}={};", f, file_content_hash((fs::path(tokenizer_dir) / f).string()));
  return id + fmt::format("system_prompt={}", cosmos3_default_use_system_prompt(pipeline_dir));
}

}  // namespace

Cosmos3PromptEncoder::Cosmos3PromptEncoder(const std::string& pipeline_dir, const std::string& tokenizer_dir)
    : tok_(tokenizer_dir, cosmos3_default_use_system_prompt(pipeline_dir)),
      identity_(tokenizer_identity(pipeline_dir, tokenizer_dir)) {}

std::string Cosmos3PromptEncoder::normalize(const std::string& prompt) const {
  const Cosmos3PromptOptions o;  // the pipeline's defaults (189 frames, 720×1280, 24 fps)
  return normalize_for(prompt, {int(o.num_frames), int(o.height), int(o.width), o.fps, false});
}

std::string Cosmos3PromptEncoder::normalize_for(const std::string& prompt, const PromptContext& ctx) const {
  Cosmos3PromptOptions o;
  o.num_frames = ctx.num_frames;
  o.height = ctx.height;
  o.width = ctx.width;
  o.fps = ctx.fps;
  // The negative prompt's conversation is the uncond one (inverse templates).
  const Cosmos3Prompts p = ctx.negative ? tok_.tokenize("", prompt, o) : tok_.tokenize(prompt, std::nullopt, o);
  return ctx.negative ? p.uncond.text : p.cond.text;
}

PromptEmbeddings Cosmos3PromptEncoder::encode_normalized(const std::vector<std::string>& prompts, int max_len) const {
  PromptEmbeddings e;
  e.embeds = Tensor::zeros({int64_t(prompts.size()), int64_t(max_len), 1}, DType::kF32);  // [B, L, 1]
  for (size_t b = 0; b < prompts.size(); ++b) {
    std::vector<int64_t> ids = tok_.tokenizer().encode(prompts[b]);  // the rendered conversation
    ids.push_back(tok_.eos_id());
    ids.push_back(tok_.vision_start_id());
    e.embeds[int64_t(b)].copy_from(cosmos3_ids_to_rows(ids, max_len));
    e.lengths.push_back(int64_t(ids.size()));
  }
  return e;
}

}  // namespace vgen
