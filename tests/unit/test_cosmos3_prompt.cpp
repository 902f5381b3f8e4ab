// Cosmos 3 prompt on the tiny Qwen-style tokenizer: the rendered conversations and ids of
// Cosmos3OmniPipeline.tokenize_prompt (tests/tokenizer_bpe/cosmos3_cases.json, made by calling the
// pipeline's method), the chat template's recognition and refusal, the pipeline flag, bad options.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "model/cosmos3/prompt.h"
#include "test_cosmos3_prompt_cases.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {
const std::string kDir = std::string(VGEN_SOURCE_DIR) + "/tests/tokenizer_bpe";
const std::string kTiny = kDir + "/tiny";

// A copy of the tiny tokenizer folder without its chat_template.jinja.
fs::path bare_copy(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("vgen_test_c3_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) fs::copy_file(fs::path(kTiny) / f, d / f);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The kModel message of building a prompt tokenizer on `dir` ("" when it builds).
std::string refusal(const fs::path& dir) {
  try {
    Cosmos3PromptTokenizer t(dir.string());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    return e.message();
  }
  return {};
}
}  // namespace

TEST(Cosmos3Prompt, MatchesThePipelineOnTheTinyTokenizer) {
  check_cosmos3_cases(kTiny, read_json_file(kDir + "/cosmos3_cases.json", ExitCode::kInput)["tiny"]);
}

TEST(Cosmos3Prompt, KnownTemplateIsTheFixtures) {
  EXPECT_EQ(qwen3_vl_chat_template(), read(kDir + "/qwen3_vl_chat_template.jinja"));
  EXPECT_EQ(read(kTiny + "/chat_template.jinja"), qwen3_vl_chat_template());
}

TEST(Cosmos3Prompt, TemplateFromTokenizerConfig) {
  const fs::path d = bare_copy("config");
  Json cfg = read_json_file((d / "tokenizer_config.json").string(), ExitCode::kInput);
  std::string crlf;
  for (char ch : qwen3_vl_chat_template()) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  cfg["chat_template"] = crlf + "\n";
  std::ofstream(d / "tokenizer_config.json") << cfg.dump();
  EXPECT_EQ(refusal(d), "");
  cfg["chat_template"] = Json::array({{{"name", "tool_use"}, {"template", "{{ x }}"}},
                                      {{"name", "default"}, {"template", qwen3_vl_chat_template()}}});
  std::ofstream(d / "tokenizer_config.json") << cfg.dump();
  EXPECT_EQ(refusal(d), "");
  const Cosmos3PromptTokenizer a(d.string()), b(kTiny);
  EXPECT_EQ(a.tokenize("x", "y", {}).cond.ids, b.tokenize("x", "y", {}).cond.ids);
  fs::remove_all(d);
}

TEST(Cosmos3Prompt, OtherTemplatesAreRefusedByName) {
  const fs::path d = bare_copy("other");
  EXPECT_NE(refusal(d).find("no chat template"), std::string::npos);
  std::string qwen2 = qwen3_vl_chat_template();
  qwen2.replace(qwen2.find("{%- if add_generation_prompt %}"), 0, "{{ 'x' }}");
  std::ofstream(d / "chat_template.jinja") << qwen2;
  const std::string msg = refusal(d);
  EXPECT_NE(msg.find((d / "chat_template.jinja").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
  fs::remove_all(d);
}

TEST(Cosmos3Prompt, EosAndVisionStartFromTheConfig) {
  const Cosmos3PromptTokenizer tok(kTiny);
  EXPECT_EQ(tok.eos_id(), tok.tokenizer().token_id("<|im_end|>"));
  EXPECT_EQ(tok.vision_start_id(), tok.tokenizer().token_id("<|vision_start|>"));
  const fs::path d = bare_copy("eos");
  fs::copy_file(fs::path(kTiny) / "chat_template.jinja", d / "chat_template.jinja");
  std::ofstream(d / "tokenizer_config.json") << R"({"eos_token": {"content": "<|endoftext|>"}})";
  EXPECT_EQ(Cosmos3PromptTokenizer(d.string()).eos_id(), tok.tokenizer().token_id("<|endoftext|>"));
  std::ofstream(d / "tokenizer_config.json") << R"({"eos_token": "<|nope|>"})";
  EXPECT_NE(refusal(d).find("'<|nope|>'"), std::string::npos);
  fs::remove_all(d);
}

TEST(Cosmos3Prompt, SystemPromptDefaultFromModelIndex) {
  const fs::path d = fs::temp_directory_path() / ("vgen_test_c3_index_" + std::to_string(::getpid()));
  fs::create_directories(d);
  EXPECT_TRUE(cosmos3_default_use_system_prompt(d.string()));
  std::ofstream(d / "model_index.json") << R"({"_class_name": "Cosmos3OmniPipeline",
                                               "default_use_system_prompt": false})";
  EXPECT_FALSE(cosmos3_default_use_system_prompt(d.string()));
  std::ofstream(d / "model_index.json") << R"({"default_use_system_prompt": "yes"})";
  EXPECT_THROW(cosmos3_default_use_system_prompt(d.string()), Error);
  fs::remove_all(d);
}

TEST(Cosmos3Prompt, TemplatesAndBadOptions) {
  Cosmos3PromptOptions o;
  o.num_frames = 5, o.fps = 4.0, o.height = 32, o.width = 48;
  EXPECT_EQ(Cosmos3PromptTokenizer::augment("Waves...", false, o),
            "Waves. The video is 1.2 seconds long and is of 4 FPS. This video is of 32x48 resolution.");
  EXPECT_EQ(Cosmos3PromptTokenizer::augment("", true, o),
            "The video is not 1.2 seconds long and is not of 4 FPS. This video is not of 32x48 resolution.");
  const Cosmos3PromptTokenizer tok(kTiny);
  using Edit = void (*)(Cosmos3PromptOptions&);
  for (Edit bad : {Edit([](Cosmos3PromptOptions& x) { x.num_frames = 0; }),
                   Edit([](Cosmos3PromptOptions& x) { x.fps = 0; }),
                   Edit([](Cosmos3PromptOptions& x) { x.height = -1; })}) {
    Cosmos3PromptOptions b;
    bad(b);
    try {
      tok.tokenize("x", std::nullopt, b);
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kRecipe);
    }
  }
}
