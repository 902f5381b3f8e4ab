// The real Qwen vocabulary (151,643 BPE ranks of qwen.tiktoken + Qwen3-VL's added tokens, unpacked
// from tests/tokenizer_bpe/qwen.tar.xz into the build tree): the prompt corpus, the seeded random
// corpus and the Cosmos 3 prompt cases against transformers (tests/tokenizer_bpe/*_cases.json).
#include <gtest/gtest.h>

#include "core/json.h"
#include "model/cosmos3/prompt.h"
#include "model/text/bpe_tokenizer.h"
#include "test_cosmos3_prompt_cases.h"

using namespace vgen;

namespace {
const std::string kDir = std::string(VGEN_SOURCE_DIR) + "/tests/tokenizer_bpe";
const std::string kQwen = VGEN_QWEN_TOKENIZER_DIR;

const BpeTokenizer& qwen() {
  static const BpeTokenizer tok = BpeTokenizer::from_file(kQwen + "/tokenizer.json");
  return tok;
}

void check(const char* set) {
  const Json cases = read_json_file(kDir + "/qwen_cases.json", ExitCode::kInput);
  size_t n = 0;
  for (const Json& c : cases[set]) {
    const auto want = c["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(qwen().encode(c["text"].get<std::string>()), want) << set << " case " << n << ": " << c["text"];
    EXPECT_EQ(qwen().decode(want), c["decoded"].get<std::string>()) << set << " case " << n;
    ++n;
  }
  EXPECT_GT(n, 20u);
}
}  // namespace

TEST(BpeTokenizerQwen, Vocabulary) {
  EXPECT_EQ(qwen().vocab_size(), 151669);
  EXPECT_EQ(qwen().token_id("<|im_start|>"), 151644);
  EXPECT_EQ(qwen().token_id("<|vision_start|>"), 151652);
  EXPECT_EQ(qwen().encode("Hello world"), (std::vector<int64_t>{9707, 1879}));
}

TEST(BpeTokenizerQwen, CorpusMatchesTransformers) { check("corpus"); }
TEST(BpeTokenizerQwen, RandomCorpusMatchesTransformers) { check("fuzz"); }

TEST(BpeTokenizerQwen, Cosmos3PromptMatchesThePipeline) {
  check_cosmos3_cases(kQwen, read_json_file(kDir + "/cosmos3_cases.json", ExitCode::kInput)["qwen"]);
}
