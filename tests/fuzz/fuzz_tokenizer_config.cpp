// Tokenizer folder configuration (model/text/tokenizer.cpp): the input is tokenizer_config.json,
// optionally followed by a NUL byte and special_tokens_map.json, beside the tiny test model's
// spiece.model. Rejected folders end in kModel; an accepted tokenizer's special tokens have ids
// inside its vocabulary and a text full of them tokenizes into that vocabulary.
#include "fuzz_common.h"
#include "model/text/tokenizer.h"

using namespace vgen;

namespace {
std::filesystem::path g_dir;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  g_dir = fuzz::scratch_dir() / "tokenizer";
  std::filesystem::create_directories(g_dir);
  std::filesystem::create_symlink(std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny/tokenizer/spiece.model",
                                  g_dir / "spiece.model");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string cfg = in.substr(0, nul), map = nul == std::string::npos ? "" : in.substr(nul + 1);
  fuzz::write_file(g_dir / "tokenizer_config.json", reinterpret_cast<const uint8_t*>(cfg.data()), cfg.size());
  std::error_code ec;
  std::filesystem::remove(g_dir / "special_tokens_map.json", ec);
  if (nul != std::string::npos)
    fuzz::write_file(g_dir / "special_tokens_map.json", reinterpret_cast<const uint8_t*>(map.data()), map.size());
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    T5Tokenizer tok(g_dir.string());
    const int64_t V = tok.vocab_size();
    fuzz::check(V >= tok.sp_vocab_size() && tok.extra_ids() >= 0, "vocabulary size");
    for (int64_t id : {tok.pad_id(), tok.eos_id(), tok.unk_id()})
      fuzz::check(id >= 0 && id < V, "special token id outside the vocabulary");
    TokenizedBatch b = tok.tokenize({"<extra_id_0> a </s><pad><unk> <extra_id_99> b"}, 32);
    for (int64_t j = 0; j < 32; ++j) {
      const int64_t id = b.input_ids.data<int64_t>()[j];
      fuzz::check(id >= 0 && id < V, "token id outside the vocabulary");
    }
  });
  return 0;
}
