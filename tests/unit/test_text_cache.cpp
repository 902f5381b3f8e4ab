// On-disk prompt embedding cache: hits equal fresh encodings, keys separate prompts and max_len,
// corrupted entries are ignored; a prompt's embeddings do not depend on what is encoded with it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "model/text/prompt_clean.h"
#include "model/wan/text/umt5.h"
#include "core/hash.h"
#include "model/wan/text/text_encoder.h"
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
  TextCache cache(dir.string(), enc.identity());
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

// Bit-identical embeddings for a prompt encoded alone, in a pair (either order), among all, with
// its neighbour served from the cache, and from the cache itself. Lengths 1 to 16 tokens (one
// truncated), so the batches differ in row count, and so in GEMM shape, from every single prompt.
TEST(TextCache, EmbeddingsDoNotDependOnNeighbours) {
  fs::path dir = fs::temp_directory_path() / ("vgen_test_text_neighbours_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  TextEncoder enc(kModel);
  TextCache cache(dir.string(), enc.identity());
  const int L = 16;
  const std::vector<std::string> prompts = {
      "dance monkey", "", "A cat walks on the grass, realistic style.", "  a &amp;amp; b ",
      "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen", "x"};
  std::vector<Tensor> alone;
  for (auto& p : prompts) alone.push_back(enc.encode({p}, L).prompt_embeds[0].clone());  // [L, D]
  std::vector<int64_t> lengths = enc.encode(prompts, L).lengths;
  EXPECT_EQ(*std::min_element(lengths.begin(), lengths.end()), 1);  // "" is EOS alone
  EXPECT_EQ(*std::max_element(lengths.begin(), lengths.end()), L);  // truncated

  Tensor all = enc.encode(prompts, L).prompt_embeds;  // [B, L, D]
  for (size_t i = 0; i < prompts.size(); ++i) {
    SCOPED_TRACE("among all: " + prompts[i]);
    EXPECT_TRUE(same(all[int64_t(i)], alone[i]));
  }
  for (size_t i = 0; i < prompts.size(); ++i)
    for (size_t j = 0; j < prompts.size(); ++j) {
      SCOPED_TRACE("pair: '" + prompts[i] + "' + '" + prompts[j] + "'");
      Tensor pair = enc.encode({prompts[i], prompts[j]}, L).prompt_embeds;  // [2, L, D]
      EXPECT_TRUE(same(pair[0], alone[i]));
      EXPECT_TRUE(same(pair[1], alone[j]));
    }
  // The pipeline's pairs (prompt, negative prompt) through the cache: the negative cached first,
  // so the prompt is encoded by itself; then both cached.
  for (size_t i = 0; i < prompts.size(); ++i) {
    SCOPED_TRACE("cached pair: " + prompts[i]);
    const std::string& neg = prompts[(i + 1) % prompts.size()];
    fs::remove_all(dir);
    encode_prompts_cached(enc, &cache, {neg}, L);
    Tensor miss = encode_prompts_cached(enc, &cache, {prompts[i], neg}, L);  // [2, L, D]
    EXPECT_TRUE(same(miss[0], alone[i]));
    EXPECT_TRUE(same(miss[1], alone[(i + 1) % prompts.size()]));
    Tensor hit = encode_prompts_cached(enc, &cache, {prompts[i], neg}, L);
    EXPECT_TRUE(same(hit[0], alone[i]));
    EXPECT_TRUE(same(hit[1], alone[(i + 1) % prompts.size()]));
  }
  // The encoder itself: each sequence's rows equal its rows encoded alone, whatever comes before.
  const Umt5Encoder& e = enc.encoder();
  std::vector<Umt5Sequence> seqs = {{{37, 5, 99, 1}, 4}, {{1}, 1}, {{12, 400, 7, 3, 250, 6, 1}, 7}, {{8, 9, 1}, 3}};
  Tensor stacked = e.forward(seqs);  // [Σ rows, D]
  int64_t r0 = 0;
  for (auto& s : seqs) {
    Tensor one = e.forward({s});  // [rows, D]
    EXPECT_TRUE(same(stacked.narrow(r0, one.dim(0)), one));
    r0 += one.dim(0);
  }
  fs::remove_all(dir);
}

TEST(TextCache, IdentityTracksTokenizerAndWeights) {
  std::string a = wan_text_identity(kModel + "/text_encoder", kModel + "/tokenizer");
  std::string b = wan_text_identity(kModel + "/text_encoder", kModel + "/tokenizer");
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("model.safetensors:"), std::string::npos);
  EXPECT_NE(a.find("spiece="), std::string::npos);
  EXPECT_NE(content_hash("a"), content_hash("b"));
  EXPECT_EQ(content_hash("a").size(), 32u);
}

namespace {

// A prompt side whose text depends on the video and the role (as Cosmos 3's): each row holds the
// length of the text it read.
class ContextEncoder final : public PromptEncoder {
 public:
  int64_t hidden_size() const override { return 1; }
  std::string normalize(const std::string& p) const override { return p; }
  std::string normalize_for(const std::string& p, const PromptContext& c) const override {
    return p + (c.negative ? " is not " : " is ") + std::to_string(c.num_frames) + "@" + std::to_string(int(c.fps));
  }
  PromptEmbeddings encode_normalized(const std::vector<std::string>& prompts, int max_len) const override {
    PromptEmbeddings e;
    e.embeds = Tensor::zeros({int64_t(prompts.size()), max_len, 1}, DType::kF32);  // [B, L, 1]
    for (size_t b = 0; b < prompts.size(); ++b) {
      e.embeds.f32()[b * size_t(max_len)] = float(prompts[b].size());
      e.lengths.push_back(1);
    }
    return e;
  }
  std::string identity() const override { return "context"; }
};

}  // namespace

// The contexts reach normalize_for (the cache's key): the same prompt for another video or role is
// another entry; without contexts normalize is used.
TEST(TextCache, PromptContextsKeyTheEntries) {
  fs::path dir = fs::temp_directory_path() / ("vgen_test_text_cache_ctx_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const ContextEncoder enc;
  const TextCache cache(dir.string(), enc.identity());
  const PromptContext a{9, 32, 48, 16.0, false}, b{17, 32, 48, 16.0, false}, neg{9, 32, 48, 16.0, true};
  const Tensor e = encode_prompts_cached(enc, &cache, {"cat", "cat", "cat"}, 4, {a, b, neg});  // [3, 4, 1]
  EXPECT_EQ(e.f32()[0], float(std::string("cat is 9@16").size()));
  EXPECT_EQ(e.f32()[4], float(std::string("cat is 17@16").size()));
  EXPECT_EQ(e.f32()[8], float(std::string("cat is not 9@16").size()));
  EXPECT_TRUE(fs::exists(cache.entry_path("cat is 9@16", 4)));
  EXPECT_TRUE(fs::exists(cache.entry_path("cat is not 9@16", 4)));
  EXPECT_TRUE(same(encode_prompts_cached(enc, &cache, {"cat", "cat", "cat"}, 4, {a, b, neg}), e));  // hits
  EXPECT_EQ(encode_prompts_cached(enc, nullptr, {"cat"}, 4).f32()[0], 3.0f);  // no contexts: normalize
  fs::remove_all(dir);
}
