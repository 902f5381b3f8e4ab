// Byte-level BPE tokenizer on the tiny Qwen-style fixture (tests/tokenizer_bpe, made by
// make_fixtures.py with transformers/tokenizers): ids and decoded text of the prompt corpus and the
// seeded random corpus, added-token flags and ignore_merges (tokenizers' own ids), the merges' two
// spellings, invalid UTF-8, the pre-tokenizer split, and the refusal of every unsupported layout by
// name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "core/utf8.h"
#include "model/text/bpe_tokenizer.h"
#include "model/text/bpe_tokenizer_split.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {
const std::string kDir = std::string(VGEN_SOURCE_DIR) + "/tests/tokenizer_bpe";
const std::string kTiny = kDir + "/tiny/tokenizer.json";

Json tiny_json() { return read_json_file(kTiny, ExitCode::kInput); }

BpeTokenizer from_json(const Json& j) { return BpeTokenizer::from_json_text(j.dump(), "edited.json"); }

// The message of the kModel error that loading `j` raises ("" when it loads).
std::string refusal(const Json& j) {
  try {
    from_json(j);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel) << e.message();
    return e.message();
  }
  return {};
}

void check_cases(const BpeTokenizer& tok, const Json& cases, const char* set) {
  size_t n = 0;
  for (const Json& c : cases[set]) {
    const std::string text = c["text"].get<std::string>();
    const auto want = c["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(tok.encode(text), want) << set << " case " << n << ": " << text;
    EXPECT_EQ(tok.decode(want), c["decoded"].get<std::string>()) << set << " case " << n;
    ++n;
  }
  EXPECT_GT(n, 20u);
}
}  // namespace

TEST(BpeTokenizer, TinyCorpusMatchesTransformers) {
  const BpeTokenizer tok = BpeTokenizer::from_file(kTiny);
  check_cases(tok, read_json_file(kDir + "/tiny_cases.json", ExitCode::kInput), "corpus");
}

TEST(BpeTokenizer, TinyRandomCorpusMatchesTransformers) {
  const BpeTokenizer tok = BpeTokenizer::from_file(kTiny);
  check_cases(tok, read_json_file(kDir + "/tiny_cases.json", ExitCode::kInput), "fuzz");
}

TEST(BpeTokenizer, MergesAsPairsEncodeTheSame) {
  Json j = tiny_json();
  Json pairs = Json::array();
  for (const Json& m : j["model"]["merges"]) {
    if (m.is_array()) {
      pairs.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      const std::string s = m.get<std::string>();
      pairs.push_back(Json::array({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)}));
    }
  }
  const BpeTokenizer a = BpeTokenizer::from_file(kTiny);
  j["model"]["merges"] = pairs;
  const BpeTokenizer b = from_json(j);
  for (const char* t : {"A cat playing piano", "don't stop 1234 ... 中文", "<|im_start|>user\nhi<|im_end|>"})
    EXPECT_EQ(a.encode(t), b.encode(t)) << t;
}

TEST(BpeTokenizer, InvalidUtf8IsReplacedLikePython) {
  const BpeTokenizer tok = BpeTokenizer::from_file(kTiny);
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(tok.encode("a\xff b\xe2\x82 c\xed\xa0\x80"), tok.encode("a" + fffd + " b" + fffd + " c" + fffd + fffd + fffd));
  EXPECT_EQ(first_invalid_utf8(tok.decode(tok.encode("\xc0\xaf\xf5"))), std::string::npos);
}

TEST(BpeTokenizer, AddedTokensAndLookups) {
  const BpeTokenizer tok = BpeTokenizer::from_file(kTiny);
  const int64_t start = tok.token_id("<|im_start|>"), end = tok.token_id("<|im_end|>");
  ASSERT_GE(start, 0);
  EXPECT_EQ(tok.encode("<|im_start|><|im_end|>"), (std::vector<int64_t>{start, end}));
  EXPECT_EQ(tok.token_id("<|no_such_token|>"), -1);
  EXPECT_EQ(tok.vocab_size(), end + 24);  // 26 added tokens after the trained vocabulary
  EXPECT_EQ(tok.decode({start, end}), "<|im_start|><|im_end|>");
  EXPECT_EQ(tok.decode({start, end}, true), "");
  EXPECT_EQ(tok.decode({tok.token_id("<think>")}, true), "<think>");  // not special
}

TEST(BpeTokenizer, AddedTokenFlagsAndIgnoreMergesMatchTokenizers) {
  size_t n = 0;
  for (const Json& variant : read_json_file(kDir + "/tiny_flags_cases.json", ExitCode::kInput)) {
    Json j = tiny_json();
    j["added_tokens"] = variant["added_tokens"];
    j["model"]["ignore_merges"] = variant["ignore_merges"];
    const BpeTokenizer tok = from_json(j);
    for (const Json& c : variant["cases"]) {
      EXPECT_EQ(tok.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<int64_t>>())
          << "ignore_merges " << variant["ignore_merges"] << ": " << c["text"];
      ++n;
    }
  }
  EXPECT_GT(n, 40u);
}

TEST(BpeTokenizer, LstripAndRstripTakeTheWhitespace) {
  Json j = tiny_json();
  for (Json& a : j["added_tokens"])
    if (a["content"] == "<|im_start|>") a["lstrip"] = true, a["rstrip"] = true;
  const BpeTokenizer tok = from_json(j);
  const int64_t id = tok.token_id("<|im_start|>");
  std::vector<int64_t> want = tok.encode("a");
  want.push_back(id);
  const std::vector<int64_t> b = tok.encode("b");
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(tok.encode("a \t<|im_start|>\n  b"), want);
}

TEST(BpeTokenizer, SplitFollowsTheRegex) {
  auto pieces = [](const std::string& s) {
    std::vector<std::string> out;
    const std::u32string cps = utf8_decode(s);
    for (auto [b, e] : bpe::qwen2_split(cps)) out.push_back(utf8_encode(cps.substr(b, e - b)));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces("I'LL it's"), (V{"I", "'LL", " it", "'s"}));
  EXPECT_EQ(pieces("a  b\n\n c   "), (V{"a", " ", " b", "\n\n", " c", "   "}));
  EXPECT_EQ(pieces("x 123 !?\r\n"), (V{"x", " ", "1", "2", "3", " !?\r\n"}));
  EXPECT_EQ(pieces(" \n \t"), (V{" \n", " \t"}));
  // Oniguruma folds U+017F (long s) onto s; \s has U+0085 and Zs but not U+001C or U+200B.
  EXPECT_EQ(pieces("'\u017Fa 'sa"), (V{"'\u017F", "a", " '", "sa"}));
  EXPECT_EQ(pieces("x\u0085\u0085\u0085y"), (V{"x", "\u0085\u0085", "\u0085y"}));
  EXPECT_EQ(pieces("x\x1c\x1c\x1cy\u200b\u200b"), (V{"x", "\x1c\x1c\x1c", "y", "\u200b\u200b"}));
}

TEST(BpeTokenizer, LongPromptIsFast) {
  const BpeTokenizer tok = BpeTokenizer::from_file(kTiny);
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "A neon street at night, rain reflections, 中文 " + std::to_string(i) + ". ";
  text += std::string(20000, '!');
  const auto t0 = std::chrono::steady_clock::now();
  const auto ids = tok.encode(text);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(ids.size(), 10000u);
  EXPECT_LT(s, 5.0);
  EXPECT_EQ(tok.decode(ids), text);
}

TEST(BpeTokenizer, RefusesOtherLayoutsByName) {
  auto edit = [](auto f) {
    Json j = tiny_json();
    f(j);
    return refusal(j);
  };
  EXPECT_EQ(edit([](Json&) {}), "");
  EXPECT_NE(edit([](Json& j) { j["model"]["type"] = "WordPiece"; }).find("model type 'WordPiece'"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["normalizer"] = {{"type", "NFKC"}}; }).find("normalizer 'NFKC'"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+"; }).find("Split"),
            std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["pre_tokenizer"] = {{"type", "Whitespace"}}; }).find("pre_tokenizer"),
            std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true; }).find("ByteLevel"),
            std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["decoder"] = {{"type", "WordPiece"}}; }).find("decoder 'WordPiece'"),
            std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"]["dropout"] = 0.1; }).find("dropout"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"]["byte_fallback"] = true; }).find("byte_fallback"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"]["merges"].push_back("zzz qqq"); }).find("'zzz' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"]["merges"].push_back("a b c"); }).find("merge 'a b c'"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"]["vocab"]["a"] = -3; }).find("id of 'a'"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["added_tokens"][0]["single_word"] = true; }).find("single_word"), std::string::npos);
  EXPECT_NE(edit([](Json& j) { j["model"].erase("merges"); }).find("merges is missing"), std::string::npos);
  const std::string msg = refusal(Json::array());
  EXPECT_NE(msg.find("edited.json"), std::string::npos) << msg;
  try {
    BpeTokenizer::from_file(kDir + "/no_such_tokenizer.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("no_such_tokenizer.json"), std::string::npos);
  }
}
