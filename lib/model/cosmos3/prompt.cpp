#include "model/cosmos3/prompt.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/json.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// The pipeline's system prompts, word for word ("a give prompt" included).
constexpr const char* kSystemPromptImage = "You are a helpful assistant who will generate images from a give prompt.";
constexpr const char* kSystemPromptVideo = "You are a helpful assistant who will generate videos from a give prompt.";

// Python's format(x, ".{digits}f"): the exact binary value rounded half to even, as glibc's printf.
std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// The pipeline's _append: trailing dots of `base` dropped, then ". " and the sentence.
std::string append_sentence(std::string base, const std::string& sentence) {
  while (!base.empty() && base.back() == '.') base.pop_back();
  return base.empty() ? sentence : base + ". " + sentence;
}

// A special token named by tokenizer_config.json (a string or an AddedToken object), or "".
std::string config_token(const Json& cfg, const char* key) {
  if (!cfg.is_object() || !cfg.contains(key)) return {};
  const Json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

Json optional_json(const fs::path& p) {
  return fs::exists(p) ? read_json_file(p.string(), ExitCode::kModel) : Json::object();
}

}  // namespace

bool cosmos3_default_use_system_prompt(const std::string& pipeline_dir) {
  const Json idx = optional_json(fs::path(pipeline_dir) / "model_index.json");
  if (!idx.is_object() || !idx.contains("default_use_system_prompt")) return true;
  VGEN_CHECK(idx["default_use_system_prompt"].is_boolean(), ExitCode::kModel,
             "{}/model_index.json: default_use_system_prompt is not true or false", pipeline_dir);
  return idx["default_use_system_prompt"].get<bool>();
}

Cosmos3PromptTokenizer::Cosmos3PromptTokenizer(const std::string& tokenizer_dir, bool default_use_system_prompt)
    : tok_(BpeTokenizer::from_file((fs::path(tokenizer_dir) / "tokenizer.json").string())),
      template_(read_chat_template(tokenizer_dir)),
      default_use_system_prompt_(default_use_system_prompt) {
  // eos as transformers resolves it: tokenizer_config.json, special_tokens_map.json, then
  // Qwen2Tokenizer's default.
  std::string eos = config_token(optional_json(fs::path(tokenizer_dir) / "tokenizer_config.json"), "eos_token");
  if (eos.empty()) eos = config_token(optional_json(fs::path(tokenizer_dir) / "special_tokens_map.json"), "eos_token");
  if (eos.empty()) eos = "<|endoftext|>";
  eos_id_ = tok_.token_id(eos);
  VGEN_CHECK(eos_id_ >= 0, ExitCode::kModel, "tokenizer {}: eos token '{}' is not in the vocabulary", tokenizer_dir,
             eos);
  vision_start_id_ = tok_.token_id("<|vision_start|>");
  VGEN_CHECK(vision_start_id_ >= 0, ExitCode::kModel, "tokenizer {}: no <|vision_start|> token", tokenizer_dir);
}

std::string Cosmos3PromptTokenizer::augment(const std::string& text, bool negative, const Cosmos3PromptOptions& o) {
  const bool image = o.num_frames == 1;
  std::string out = text;
  if (!image && o.add_duration_template) {
    const std::string d = fixed(double(o.num_frames) / o.fps, 1), f = fixed(o.fps, 0);
    out = append_sentence(out, negative ? "The video is not " + d + " seconds long and is not of " + f + " FPS."
                                        : "The video is " + d + " seconds long and is of " + f + " FPS.");
  }
  if (o.add_resolution_template) {
    const std::string size = std::to_string(o.height) + "x" + std::to_string(o.width);
    const std::string what = image ? "This image is " : "This video is ";
    out = append_sentence(out, what + (negative ? "not of " : "of ") + size + " resolution.");
  }
  return out;
}

Cosmos3PromptTokens Cosmos3PromptTokenizer::render(const std::string& user_text, bool image, bool system_prompt) const {
  std::vector<ChatMessage> conv;
  if (system_prompt) conv.push_back({"system", image ? kSystemPromptImage : kSystemPromptVideo});
  conv.push_back({"user", user_text});
  Cosmos3PromptTokens out;
  out.text = render_chat(template_, conv, true);
  out.ids = tok_.encode(out.text);
  out.ids.push_back(eos_id_);
  out.ids.push_back(vision_start_id_);
  return out;
}

Cosmos3Prompts Cosmos3PromptTokenizer::tokenize(const std::string& prompt, const std::optional<std::string>& negative,
                                                const Cosmos3PromptOptions& o) const {
  VGEN_CHECK(o.num_frames >= 1, ExitCode::kRecipe, "num_frames must be at least 1, got {}", o.num_frames);
  VGEN_CHECK(std::isfinite(o.fps) && o.fps > 0, ExitCode::kRecipe, "fps must be a positive number, got {}", o.fps);
  VGEN_CHECK(o.height >= 1 && o.width >= 1, ExitCode::kRecipe, "height and width must be positive, got {}x{}",
             o.height, o.width);
  const bool image = o.num_frames == 1;
  const bool system_prompt = o.use_system_prompt.value_or(default_use_system_prompt_);
  return {render(augment(prompt, false, o), image, system_prompt),
          render(augment(negative.value_or(""), true, o), image, system_prompt)};
}

}  // namespace vgen
