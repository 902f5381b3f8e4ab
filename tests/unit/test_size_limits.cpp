// Size limits (model/size_limits.h): the family reads them from the configs (the Wan RoPE tables'
// positions, the VAE's factors, the tokenizer's model_max_length), the refusals name the recipe key,
// the value and the limit, and the limit is the one the RoPE tables enforce per prompt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "model/registry.h"
#include "model/text/tokenizer.h"
#include "model/wan/dit/rope_tables.h"
#include "plan/plan.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

std::string source(const std::string& rel) { return std::string(VGEN_SOURCE_DIR) + "/" + rel; }

SizeLimits limits_of(const std::string& model_dir) {
  const DiffusersDir dir(model_dir);
  return model_family(dir).size_limits(dir);
}

Recipe demo(std::vector<std::string> sets = {}) {
  sets.push_back("model=" + source("tests/golden/wan21-tiny"));
  return load_recipe(source("recipes/demo-cpu.yaml"), sets);
}

// The kRecipe message of check_generation_sizes, or "" when it passes.
std::string refusal(const Recipe& r, const SizeLimits& l) {
  try {
    check_generation_sizes(r, l);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    return e.message();
  }
  return "";
}

void expect_has(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

}  // namespace

TEST(SizeLimits, WanLimitsComeFromTheConfigs) {
  const SizeLimits l = limits_of(source("tests/golden/wan21-tiny"));
  EXPECT_EQ(l.scale_spatial, 8);
  EXPECT_EQ(l.scale_temporal, 4);
  EXPECT_EQ(l.patch, (std::array<int, 3>{1, 2, 2}));
  EXPECT_EQ(l.max_positions, (std::array<int64_t, 3>{1024, 1024, 1024}));  // rope_max_seq_len
  EXPECT_EQ(l.max_text_tokens, 512);                                        // model_max_length
  EXPECT_EQ(l.max_num_frames(), 4093);                                      // (1024 − 1)·4 + 1
  EXPECT_EQ(l.max_pixels(1), 16384);
  EXPECT_EQ(l.max_pixels(2), 16384);
  EXPECT_EQ(l.frame_positions(81), 21);
  // Wan 2.2's two experts: the smaller table of the two bounds the video.
  const SizeLimits l2 = limits_of(source("tests/golden/wan22-tiny"));
  EXPECT_GT(l2.max_positions[0], 0);
  // A config-only copy (no tokenizer, no VAE folder needed): positions known, tokens not.
  const SizeLimits lc = limits_of(source("recipes/models/wan2.1-t2v-14b"));
  EXPECT_EQ(lc.max_positions[0], 1024);
  EXPECT_EQ(lc.max_text_tokens, 0);
}

// The preflight's number is the one the RoPE tables refuse a prompt with at render time.
TEST(SizeLimits, TheLimitIsTheRopeTables) {
  const DiffusersDir dir(source("tests/golden/wan21-tiny"));
  const WanTransformerConfig tc =
      WanTransformerConfig::from_json(dir.component_config("transformer"), "transformer/config.json");
  const SizeLimits l = model_family(dir).size_limits(dir);
  const WanRopeTables tables(tc);
  Tensor c, s;
  const int64_t n = l.max_positions[0];
  EXPECT_NO_THROW(tables.make(n, 1, 1, 0, 1, c, s));
  EXPECT_THROW(tables.make(n + 1, 1, 1, 0, 1, c, s), Error);
  EXPECT_THROW(tables.make(1, l.max_positions[1] + 1, 1, 0, 1, c, s), Error);
  EXPECT_EQ(l.frame_positions(l.max_num_frames()), n);
  EXPECT_EQ(l.frame_positions(l.max_num_frames() + l.scale_temporal), n + 1);
}

TEST(SizeLimits, RecipeSizesAreRefusedByKey) {
  const SizeLimits l = limits_of(source("tests/golden/wan21-tiny"));
  EXPECT_EQ(refusal(demo({"generation.num_frames=4093", "generation.height=16384", "generation.width=16384",
                          "generation.max_sequence_length=512"}),
                    l),
            "");
  expect_has(refusal(demo({"generation.num_frames=1000001"}), l),
             {"generation.num_frames: 1000001 frames are 250001 latent frames", "1024 positions",
              "rope_max_seq_len", "at most 4093 frames"});
  expect_has(refusal(demo({"generation.height=16400"}), l),
             {"generation.height: 16400 pixels are 1025 positions", "at most 16384"});
  expect_has(refusal(demo({"generation.width=16400"}), l), {"generation.width: 16400", "at most 16384"});
  expect_has(refusal(demo({"generation.max_sequence_length=100000000"}), l),
             {"generation.max_sequence_length: 100000000 tokens", "model_max_length", "at most 512"});
  // No token limit known (a config-only copy): any length passes this check.
  SizeLimits open = l;
  open.max_text_tokens = 0;
  EXPECT_EQ(refusal(demo({"generation.max_sequence_length=100000"}), open), "");
}

// The factors are model data: a VAE of spatial factor 16 (Wan 2.2 TI2V-5B) makes 32-pixel steps.
TEST(SizeLimits, FactorsComeFromTheModel) {
  SizeLimits l;
  l.scale_spatial = 16;
  expect_has(refusal(demo({"generation.height=48"}), l),
             {"generation.height: 48 is not a multiple of 32", "spatial factor 16", "patch 2"});
  EXPECT_EQ(refusal(demo({"generation.height=64", "generation.width=96"}), l), "");
  l = SizeLimits{};
  l.scale_temporal = 8;
  EXPECT_NE(frames_problem(13, l).find("not 1 + k·8"), std::string::npos) << frames_problem(13, l);
  EXPECT_EQ(frames_problem(17, l), "");
  l = SizeLimits{};
  l.patch[0] = 2;
  EXPECT_NE(frames_problem(9, l).find("not a multiple of the DiT's temporal patch 2"), std::string::npos);
  EXPECT_EQ(frames_problem(5, l), "");
  EXPECT_EQ(frames_problem(1000001, SizeLimits{}), "");  // no position table: no frame limit
}

TEST(SizeLimits, TokenizerMaxLength) {
  const fs::path dir = fs::temp_directory_path() / ("vgen_toklimit_" + std::to_string(getpid()));
  fs::create_directories(dir);
  EXPECT_EQ(tokenizer_max_length(dir.string()), 0);  // no tokenizer_config.json
  std::ofstream(dir / "tokenizer_config.json") << R"({"model_max_length": 1000000000000000019884624838656})";
  EXPECT_EQ(tokenizer_max_length(dir.string()), 0);  // transformers' "no limit"
  std::ofstream(dir / "tokenizer_config.json") << R"({"model_max_length": 1e30})";
  EXPECT_EQ(tokenizer_max_length(dir.string()), 0);
  std::ofstream(dir / "tokenizer_config.json") << R"({"model_max_length": 226})";
  EXPECT_EQ(tokenizer_max_length(dir.string()), 226);
  fs::remove_all(dir);
}

// `vgen plan` reads the model through the same check.
TEST(SizeLimits, PlanRefusesTheSameSizes) {
  EXPECT_NO_THROW(read_plan_model(demo()));
  try {
    read_plan_model(demo({"generation.num_frames=5001"}));
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    expect_has(e.message(), {"generation.num_frames: 5001"});
  }
}
