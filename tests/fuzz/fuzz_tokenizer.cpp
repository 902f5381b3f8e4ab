// Prompt text on its way to the text encoder: UTF-8 decoding (core/utf8.cpp, any bytes), prompt
// cleaning (model/text/prompt_clean.cpp: HTML unescaping, Python whitespace) and the T5 tokenizer
// (model/text/tokenizer.cpp) of the tiny test model. The first input byte picks max_len (1..64), the
// rest is the text. Invalid UTF-8 is replaced, never rejected: nothing here may throw. The
// tokenizer's ids lie in its vocabulary, rows are truncated to max_len with EOS last, the mask
// covers exactly the real tokens.
#include <memory>

#include "core/utf8.h"
#include "fuzz_common.h"
#include "model/text/prompt_clean.h"
#include "model/text/tokenizer.h"

using namespace vgen;

namespace {
std::unique_ptr<T5Tokenizer> g_tok;

void check_utf8(const std::string& s) {
  const std::string fixed = replace_invalid_utf8(s);
  fuzz::check(first_invalid_utf8(fixed) == std::string::npos, "replace_invalid_utf8 left ill-formed UTF-8");
  fuzz::check((first_invalid_utf8(s) == std::string::npos) == (fixed == s), "valid UTF-8 changed by replacement");
  fuzz::check(utf8_encode(utf8_decode(fixed)) == fixed, "UTF-8 round trip");
}

void check_row(const std::vector<int64_t>& ids, int max_len) {
  fuzz::check(!ids.empty() && ids.size() <= size_t(max_len), "row length");
  fuzz::check(ids.back() == g_tok->eos_id(), "row does not end in EOS");
  for (int64_t id : ids) fuzz::check(id >= 0 && id < g_tok->vocab_size(), "token id outside the vocabulary");
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  g_tok = std::make_unique<T5Tokenizer>(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/tokenizer");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int max_len = 1 + data[0] % 64;
  const std::string raw(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz::expect_documented({}, [&] {
    check_utf8(raw);
    const std::string cleaned = prompt_clean(raw);
    fuzz::check(first_invalid_utf8(cleaned) == std::string::npos, "cleaned prompt is not UTF-8");
    const std::u32string cps = utf8_decode(cleaned);
    fuzz::check(cps.empty() || (!py_isspace(cps.front()) && !py_isspace(cps.back())), "cleaned prompt not stripped");
    for (size_t i = 1; i < cps.size(); ++i)
      fuzz::check(!(py_isspace(cps[i - 1]) && py_isspace(cps[i])), "whitespace run left in the cleaned prompt");
    check_row(g_tok->encode_with_eos(cleaned, max_len), max_len);
    check_row(g_tok->encode_with_eos(raw, max_len), max_len);
    TokenizedBatch b = g_tok->tokenize({cleaned, raw, ""}, max_len);
    fuzz::check(b.input_ids.dim(0) == 3 && b.input_ids.dim(1) == max_len, "batch shape");
    for (int64_t r = 0; r < 3; ++r) {
      const int64_t n = b.lengths[size_t(r)];
      fuzz::check(n >= 1 && n <= max_len, "batch row length");
      for (int64_t j = 0; j < max_len; ++j) {
        const int64_t id = b.input_ids.data<int64_t>()[r * max_len + j];
        const int64_t m = b.attention_mask.data<int64_t>()[r * max_len + j];
        fuzz::check(m == (j < n ? 1 : 0), "attention mask");
        if (j >= n) fuzz::check(id == g_tok->pad_id(), "padding id");
      }
    }
  });
  return 0;
}
