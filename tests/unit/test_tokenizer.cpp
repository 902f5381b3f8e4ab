// T5 tokenizer on the fixture SentencePiece model: golden ids, EOS/padding/truncation, special
// tokens and sentinel ids, errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/json.h"
#include "io/safetensors.h"
#include "model/text/tokenizer.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {
const std::string kGolden = std::string(VGEN_SOURCE_DIR) + "/tests/golden";
const std::string kTokDir = kGolden + "/wan21-tiny/tokenizer";

std::vector<int64_t> row(const Tensor& t, int64_t b) {
  const int64_t L = t.dim(1);
  const int64_t* p = t.data<int64_t>() + b * L;
  return std::vector<int64_t>(p, p + L);
}

// A temporary tokenizer folder with the fixture's spiece.model and the given config.
std::string make_tok_dir(const std::string& name, const Json& config) {
  fs::path d = fs::temp_directory_path() / ("vgen_test_tok_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  fs::copy_file(kTokDir + "/spiece.model", d / "spiece.model", fs::copy_options::overwrite_existing);
  std::ofstream(d / "tokenizer_config.json") << config.dump();
  return d.string();
}
}  // namespace

TEST(Tokenizer, GoldenIdsAndMask) {
  Json params = read_json_file(kGolden + "/cases/text_encode.json", ExitCode::kInput);
  auto cleaned = params["cleaned_prompts"].get<std::vector<std::string>>();
  int max_len = params["max_sequence_length"].get<int>();
  WeightStore ref = WeightStore::open(kGolden + "/cases/text_encode.safetensors");
  Tensor ids = ref.get("input_ids"), mask = ref.get("attention_mask");

  T5Tokenizer tok(kTokDir);
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.eos_id(), 1);
  EXPECT_EQ(tok.unk_id(), 2);
  EXPECT_EQ(tok.sp_vocab_size(), 1000);
  TokenizedBatch b = tok.tokenize(cleaned, max_len);
  ASSERT_EQ(b.input_ids.shape(), ids.shape());
  for (int64_t i = 0; i < ids.dim(0); ++i) {
    EXPECT_EQ(row(b.input_ids, i), row(ids, i)) << "prompt " << i << ": " << cleaned[size_t(i)];
    EXPECT_EQ(row(b.attention_mask, i), row(mask, i)) << "prompt " << i;
    int64_t n = 0;
    for (int64_t v : row(mask, i)) n += v;
    EXPECT_EQ(b.lengths[size_t(i)], n);
  }
}

TEST(Tokenizer, EmptyPromptIsEosThenPad) {
  T5Tokenizer tok(kTokDir);
  TokenizedBatch b = tok.tokenize({""}, 6);
  EXPECT_EQ(row(b.input_ids, 0), (std::vector<int64_t>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row(b.attention_mask, 0), (std::vector<int64_t>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.lengths[0], 1);
}

TEST(Tokenizer, Truncation) {
  T5Tokenizer tok(kTokDir);
  std::string text = "A cat walks on the grass, realistic style. A dog runs along the river under a blue sky.";
  std::vector<int64_t> full = tok.encode(text);
  ASSERT_GT(full.size(), 10u);
  for (int max_len : {1, 2, 5, int(full.size()), int(full.size()) + 1, int(full.size()) + 4}) {
    std::vector<int64_t> want(full.begin(), full.begin() + std::min<size_t>(full.size(), size_t(max_len - 1)));
    want.push_back(1);
    EXPECT_EQ(tok.encode_with_eos(text, max_len), want) << "max_len " << max_len;
    TokenizedBatch b = tok.tokenize({text}, max_len);
    std::vector<int64_t> padded = want;
    padded.resize(size_t(max_len), 0);
    EXPECT_EQ(row(b.input_ids, 0), padded);
  }
  EXPECT_THROW(tok.tokenize({text}, 0), Error);
}

TEST(Tokenizer, LiteralSpecialTokensAreSplit) {
  T5Tokenizer tok(kTokDir);
  std::vector<int64_t> a = tok.encode("a cat"), b = tok.encode("a dog");
  std::vector<int64_t> want = a;
  want.push_back(1);
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(tok.encode("a cat</s>a dog"), want);
  EXPECT_EQ(tok.encode("<pad>"), (std::vector<int64_t>{0}));
}

TEST(Tokenizer, SentinelIdsFollowT5Convention) {
  std::string d = make_tok_dir("extra", {{"extra_ids", 3}, {"eos_token", "</s>"}, {"pad_token", "<pad>"}});
  T5Tokenizer tok(d);
  EXPECT_EQ(tok.extra_ids(), 3);
  EXPECT_EQ(tok.vocab_size(), 1003);
  EXPECT_EQ(tok.special_token_id("<extra_id_0>"), 1002);  // extra_id_0 is the last id
  EXPECT_EQ(tok.special_token_id("<extra_id_2>"), 1000);
  EXPECT_EQ(tok.special_token_id("<extra_id_3>"), -1);
  std::vector<int64_t> want = tok.encode("a cat ");
  want.push_back(1001);
  std::vector<int64_t> tail = tok.encode(" a dog");
  want.insert(want.end(), tail.begin(), tail.end());
  EXPECT_EQ(tok.encode("a cat <extra_id_1> a dog"), want);
  fs::remove_all(d);
}

TEST(Tokenizer, AddedTokensDecoderWins) {
  Json cfg = {{"extra_ids", 1}, {"added_tokens_decoder", {{"1005", {{"content", "<extra_id_0>"}, {"special", true}}}}}};
  std::string d = make_tok_dir("added", cfg);
  T5Tokenizer tok(d);
  EXPECT_EQ(tok.special_token_id("<extra_id_0>"), 1005);
  EXPECT_EQ(tok.vocab_size(), 1006);
  fs::remove_all(d);
}

TEST(Tokenizer, MissingModelNamesThePath) {
  fs::path d = fs::temp_directory_path() / ("vgen_test_tok_missing_" + std::to_string(::getpid()));
  fs::create_directories(d);
  try {
    T5Tokenizer tok(d.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find((d / "spiece.model").string()), std::string::npos) << e.message();
  }
  fs::remove_all(d);
}
