// Byte-level BPE tokenizer (model/text/bpe_tokenizer*) and the Cosmos 3 prompt (model/cosmos3/
// prompt.cpp). An even first byte: the rest is a prompt for the tiny Qwen-style test tokenizer; any
// bytes encode (ill-formed UTF-8 is replaced like Python's errors="replace", never refused), every
// id lies in the vocabulary, decoding gives well-formed UTF-8 and, for text without added tokens
// ('<'), the NFC of the replaced text; the prompt renders, ending in eos and <|vision_start|>. An
// odd first byte: the rest is a tokenizer.json, refused only with kModel; one that loads encodes
// and decodes a fixed text into its vocabulary.
#include <memory>

#include "core/utf8.h"
#include "fuzz_common.h"
#include "model/cosmos3/prompt.h"
#include "model/text/bpe_tokenizer.h"
#include "model/text/bpe_tokenizer_split.h"

using namespace vgen;

namespace {
std::unique_ptr<Cosmos3PromptTokenizer> g_prompt;

void check_ids(const BpeTokenizer& tok, const std::vector<int64_t>& ids) {
  for (int64_t id : ids) fuzz::check(id >= 0 && id < tok.vocab_size(), "token id outside the vocabulary");
}

void fuzz_prompt(const std::string& raw) {
  const BpeTokenizer& tok = g_prompt->tokenizer();
  const std::vector<int64_t> ids = tok.encode(raw);
  check_ids(tok, ids);
  const std::string text = tok.decode(ids);
  fuzz::check(first_invalid_utf8(text) == std::string::npos, "decoded text is not UTF-8");
  const std::string fixed = replace_invalid_utf8(raw);
  if (fixed.find('<') == std::string::npos)
    fuzz::check(text == bpe::nfc(fixed), "decode(encode(text)) is not the text's NFC", fixed);
  Cosmos3PromptOptions o;
  o.num_frames = 1 + int64_t(raw.size() % 3);
  const Cosmos3Prompts p = g_prompt->tokenize(raw, raw, o);
  for (const Cosmos3PromptTokens* t : {&p.cond, &p.uncond}) {
    check_ids(tok, t->ids);
    fuzz::check(t->ids.size() >= 2 && t->ids.back() == g_prompt->vision_start_id() &&
                    t->ids[t->ids.size() - 2] == g_prompt->eos_id(),
                "prompt ids do not end in eos, <|vision_start|>");
  }
}

void fuzz_file(const std::string& json) {
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    const BpeTokenizer tok = BpeTokenizer::from_json_text(json, "fuzz.json");
    const std::vector<int64_t> ids = tok.encode("A cat's 12 pianos <|im_start|> \xe4\xb8\xad\xff\r\n  x");
    check_ids(tok, ids);
    fuzz::check(first_invalid_utf8(tok.decode(ids)) == std::string::npos, "decoded text is not UTF-8");
  });
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  g_prompt = std::make_unique<Cosmos3PromptTokenizer>(std::string(VGEN_SOURCE_DIR) + "/tests/tokenizer_bpe/tiny");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    fuzz::expect_documented({}, [&] { fuzz_prompt(rest); });
  } else {
    fuzz_file(rest);
  }
  return 0;
}
