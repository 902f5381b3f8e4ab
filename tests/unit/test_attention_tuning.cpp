// The attention key split's tuning knobs (io/attention_tuning.h): VGEN_ATTN_KV_CHUNK and
// VGEN_ATTN_TAIL read once when a recipe is parsed, a bad value refused naming the variable, and
// the split carried from the recipe to every attention call's policy (self and cross).
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "io/attention_tuning.h"
#include "io/recipe.h"
#include "model/wan/dit/block_policy.h"

using namespace vgen;

namespace {

// Sets the two variables for one scope (null: unset), and unsets them after.
class KnobEnv {
 public:
  KnobEnv(const char* chunk, const char* tail) {
    set("VGEN_ATTN_KV_CHUNK", chunk);
    set("VGEN_ATTN_TAIL", tail);
  }
  ~KnobEnv() {
    unsetenv("VGEN_ATTN_KV_CHUNK");
    unsetenv("VGEN_ATTN_TAIL");
  }

 private:
  static void set(const char* name, const char* value) {
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
};

void expect_usage_error(const char* chunk, const char* tail, const char* name) {
  SCOPED_TRACE(::testing::Message() << "chunk " << (chunk ? chunk : "(unset)") << " tail "
                                    << (tail ? tail : "(unset)"));
  KnobEnv env(chunk, tail);
  try {
    attention_key_split_from_env();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(ExitCode::kUsage)) << e.message();
    EXPECT_NE(e.message().find(name), std::string::npos) << e.message();
  }
}

}  // namespace

TEST(AttentionTuning, DefaultsWithoutTheEnvironment) {
  KnobEnv env(nullptr, nullptr);
  const AttentionKeySplit s = attention_key_split_from_env();
  EXPECT_EQ(s.kv_chunk, -1);
  EXPECT_TRUE(s.tail_fold);
  const AttentionKeySplit d{};
  EXPECT_EQ(d.kv_chunk, s.kv_chunk);
  EXPECT_EQ(d.tail_fold, s.tail_fold);
}

TEST(AttentionTuning, ReadsBothKnobs) {
  {
    KnobEnv env("auto", "fold");
    EXPECT_EQ(attention_key_split_from_env().kv_chunk, -1);
    EXPECT_TRUE(attention_key_split_from_env().tail_fold);
  }
  {
    KnobEnv env("0", "cudnn");
    EXPECT_EQ(attention_key_split_from_env().kv_chunk, 0);
    EXPECT_FALSE(attention_key_split_from_env().tail_fold);
  }
  {
    KnobEnv env("19000", "");
    EXPECT_EQ(attention_key_split_from_env().kv_chunk, 19000);
    EXPECT_TRUE(attention_key_split_from_env().tail_fold);
  }
}

TEST(AttentionTuning, BadValuesNameTheVariable) {
  for (const char* chunk : {"-5", "1e4", "many", "1234567890"})
    expect_usage_error(chunk, nullptr, "VGEN_ATTN_KV_CHUNK");
  for (const char* tail : {"native", "FOLD", "0"}) expect_usage_error(nullptr, tail, "VGEN_ATTN_TAIL");
}

// Resolved with the recipe, then carried by the block policy into both attention calls.
TEST(AttentionTuning, RecipeCarriesTheSplitToEveryCall) {
  KnobEnv env("4096", "cudnn");
  const Recipe r = parse_recipe("attention_config:\n  backend: cudnn\n", "r.yaml", {});
  EXPECT_EQ(r.attention.backend, AttentionBackend::kCudnn);
  EXPECT_EQ(r.attention.key_split.kv_chunk, 4096);
  EXPECT_FALSE(r.attention.key_split.tail_fold);
  const WanBlockPolicy block{Fp8Switches{true, false, true}, LinearRows::kBatched, r.attention};
  for (const AttentionPolicy& p : {block.self_attention(), block.cross_attention()}) {
    EXPECT_EQ(p.backend, AttentionBackend::kCudnn);
    EXPECT_EQ(p.key_split.kv_chunk, 4096);
    EXPECT_FALSE(p.key_split.tail_fold);
  }
  EXPECT_TRUE(block.self_attention().fp8);
  EXPECT_FALSE(block.cross_attention().fp8);
}
