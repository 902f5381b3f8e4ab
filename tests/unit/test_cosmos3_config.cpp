// Cosmos3Config: the fixtures' configs (Qwen3 and Edge style) parse to the variants they describe;
// unsupported values are refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "model/cosmos3/config.h"

namespace vgen {
namespace {

std::string fixture(const std::string& model) {
  return std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3/" + model + "/transformer";
}

Json tiny() { return read_json_file(fixture("cosmos3-tiny") + "/config.json", ExitCode::kModel); }

// The message of the kModel error from_json throws for `j` (empty if none).
std::string refusal(const Json& j) {
  try {
    Cosmos3Config::from_json(j, "config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    return e.what();
  }
  return "";
}

TEST(Cosmos3Config, QwenStyleFixture) {
  const Cosmos3Config c = Cosmos3Config::load(fixture("cosmos3-tiny"));
  EXPECT_EQ(c.hidden_act, Cosmos3Act::kSilu);
  EXPECT_FALSE(c.nemotron_norm());
  EXPECT_TRUE(c.qk_norm_for_text);
  EXPECT_FALSE(c.has_und_k_norm_for_gen());
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.kv_groups(), 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.rope_axes_dim, (std::array<int, 3>{6, 5, 5}));
  EXPECT_EQ(c.temporal_margin, 15000);
  EXPECT_EQ(c.patch_latent_dim, 192);
  EXPECT_EQ(c.vocab_size, 446);
}

TEST(Cosmos3Config, EdgeStyleFixture) {
  const Cosmos3Config c = Cosmos3Config::load(fixture("cosmos3-edge-tiny"));
  EXPECT_EQ(c.hidden_act, Cosmos3Act::kRelu2);
  EXPECT_TRUE(c.nemotron_norm());
  EXPECT_FALSE(c.qk_norm_for_text);
  EXPECT_TRUE(c.has_und_k_norm_for_gen());
  EXPECT_TRUE(c.attention_bias);
}

TEST(Cosmos3Config, RopeAxesFromRopeScalingOrDefault) {
  Json j = tiny();
  j["head_dim"] = 128;
  j["rope_axes_dim"] = nullptr;
  j["rope_scaling"] = Json{{"mrope_section", {24, 20, 20}}, {"rope_type", "default"}};
  EXPECT_EQ(Cosmos3Config::from_json(j, "c").rope_axes_dim, (std::array<int, 3>{24, 20, 20}));
  j["rope_scaling"] = nullptr;
  EXPECT_EQ(Cosmos3Config::from_json(j, "c").rope_axes_dim, (std::array<int, 3>{24, 20, 20}));
}

TEST(Cosmos3Config, UndKNormForGenNeedsNoTextNorm) {
  Json j = tiny();
  j["use_und_k_norm_for_gen"] = true;  // diffusers ignores it next to the text Q/K norm
  EXPECT_FALSE(Cosmos3Config::from_json(j, "c").has_und_k_norm_for_gen());
}

TEST(Cosmos3Config, RefusesUnsupportedValuesByKey) {
  struct Bad {
    const char* key;
    Json value;
  };
  const Bad bad[] = {{"hidden_act", "gelu"},      {"num_key_value_heads", 3},  {"head_dim", 31},
                     {"rope_axes_dim", {6, 5, 4}}, {"rope_axes_dim", {2, 7, 7}}, {"patch_latent_dim", 190},
                     {"hidden_size", 0},          {"rms_norm_eps", 0.0},       {"rope_theta", "big"},
                     {"timestep_scale", -1.0},    {"attention_bias", 1}};
  for (const Bad& b : bad) {
    Json j = tiny();
    j[b.key] = b.value;
    const std::string msg = refusal(j);
    EXPECT_NE(msg.find(b.key), std::string::npos) << b.key << " = " << b.value.dump() << ": '" << msg << "'";
  }
}

}  // namespace
}  // namespace vgen
