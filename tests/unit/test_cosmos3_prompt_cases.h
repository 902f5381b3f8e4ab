// Cosmos3OmniPipeline.tokenize_prompt cases (tests/tokenizer_bpe/cosmos3_cases.json) of one
// tokenizer, checked against Cosmos3PromptTokenizer: rendered conversations and ids.
#pragma once
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/json.h"
#include "model/cosmos3/prompt.h"

namespace vgen {

inline void check_cosmos3_cases(const std::string& tokenizer_dir, const Json& cases) {
  const Cosmos3PromptTokenizer with_system(tokenizer_dir, true), without_system(tokenizer_dir, false);
  size_t n = 0;
  for (const Json& c : cases) {
    const Cosmos3PromptTokenizer& tok = c["default_use_system_prompt"].get<bool>() ? with_system : without_system;
    Cosmos3PromptOptions o;
    if (c.contains("num_frames")) o.num_frames = c["num_frames"].get<int64_t>();
    if (c.contains("height")) o.height = c["height"].get<int64_t>();
    if (c.contains("width")) o.width = c["width"].get<int64_t>();
    if (c.contains("fps")) o.fps = c["fps"].get<double>();
    if (c.contains("use_system_prompt")) o.use_system_prompt = c["use_system_prompt"].get<bool>();
    if (c.contains("add_resolution_template")) o.add_resolution_template = c["add_resolution_template"].get<bool>();
    if (c.contains("add_duration_template")) o.add_duration_template = c["add_duration_template"].get<bool>();
    std::optional<std::string> neg;
    if (!c["negative_prompt"].is_null()) neg = c["negative_prompt"].get<std::string>();
    const Cosmos3Prompts p = tok.tokenize(c["prompt"].get<std::string>(), neg, o);
    EXPECT_EQ(p.cond.text, c["cond_text"].get<std::string>()) << "case " << n;
    EXPECT_EQ(p.uncond.text, c["uncond_text"].get<std::string>()) << "case " << n;
    EXPECT_EQ(p.cond.ids, c["cond_ids"].get<std::vector<int64_t>>()) << "case " << n;
    EXPECT_EQ(p.uncond.ids, c["uncond_ids"].get<std::vector<int64_t>>()) << "case " << n;
    ++n;
  }
  EXPECT_EQ(n, 24u);
}

}  // namespace vgen
