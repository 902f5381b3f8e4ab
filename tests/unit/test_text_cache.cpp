// On-disk prompt embedding cache: hits equal fresh encodings, keys separate prompts and max_len,
// corrupted entries are ignored.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "model/wan/prompt_clean.h"
#include "pipeline/text_cache.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {
const std::string kModel = std::string(VGEN_SOURCE_DIR) + "/tests/golden/wan21-tiny";

bool same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.f32()[i] != b.f32()[i]) return false;
  return true;
}
}  // namespace

TEST(TextCache, HitsEqualFreshEncoding) {
  fs::path dir = fs::temp_directory_path() / ("vgen_test_text_cache_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  TextEncoder enc(kModel);
  TextCache cache(dir.string(), TextCache::encoder_identity(enc));
  std::vector<std::string> prompts = {"dance monkey", "  a &amp;amp; b ", ""};
  Tensor fresh = enc.encode(prompts, 16).prompt_embeds;  // [3, 16, 32]

  Tensor first = encode_prompts_cached(enc, &cache, prompts, 16);
  EXPECT_TRUE(same(first, fresh));
  for (auto& p : prompts) EXPECT_TRUE(fs::exists(cache.entry_path(prompt_clean(p), 16)));
  Tensor hit = cache.load(prompt_clean(prompts[0]), 16, 32);
  ASSERT_TRUE(hit.defined());
  EXPECT_TRUE(same(hit, fresh[0]));
  Tensor second = encode_prompts_cached(enc, &cache, prompts, 16);
  EXPECT_TRUE(same(second, fresh));
  EXPECT_TRUE(same(encode_prompts_cached(enc, nullptr, prompts, 16), fresh));

  // Other max_len or prompt: a different entry.
  EXPECT_NE(cache.entry_path("dance monkey", 16), cache.entry_path("dance monkey", 17));
  EXPECT_FALSE(cache.load("dance monkey", 17, 32).defined());
  EXPECT_FALSE(cache.load("dance monkeys", 16, 32).defined());
  // Another encoder identity does not see these entries.
  TextCache other(dir.string(), "another encoder");
  EXPECT_FALSE(other.load("dance monkey", 16, 32).defined());

  // A corrupted entry is ignored (a warning) and rewritten by the next cached encoding.
  std::string path = cache.entry_path("dance monkey", 16);
  std::ofstream(path, std::ios::trunc) << "garbage";
  EXPECT_FALSE(cache.load("dance monkey", 16, 32).defined());
  EXPECT_TRUE(same(encode_prompts_cached(enc, &cache, prompts, 16), fresh));
  EXPECT_TRUE(cache.load("dance monkey", 16, 32).defined());
  // Wrong hidden size: ignored.
  EXPECT_FALSE(cache.load("dance monkey", 16, 64).defined());
  fs::remove_all(dir);
}

TEST(TextCache, IdentityTracksTokenizerAndWeights) {
  std::string a = TextCache::encoder_identity(kModel + "/text_encoder", kModel + "/tokenizer");
  std::string b = TextCache::encoder_identity(kModel + "/text_encoder", kModel + "/tokenizer");
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("model.safetensors:"), std::string::npos);
  EXPECT_NE(a.find("spiece="), std::string::npos);
  EXPECT_NE(text_cache_hash("a"), text_cache_hash("b"));
  EXPECT_EQ(text_cache_hash("a").size(), 32u);
}
