// The golden case `text_encode` through run_golden on a single-rank mesh: zero failures.
#include <gtest/gtest.h>

#include "dist/communicator.h"
#include "dist/mesh.h"
#include "dit_test_util.h"
#include "io/recipe.h"
#include "model/wan/family.h"
#include "tools/golden.h"

using namespace vgen;

namespace {
const std::string kFixtures = test::golden_dir();
}  // namespace

TEST(GoldenText, RunGoldenPasses) {
  Mesh mesh = test::single_rank_mesh();
  Recipe recipe;
  recipe.device = Device::kCPU;
  recipe.precision = Precision::kFp32;
  EXPECT_EQ(run_golden(kFixtures, recipe, mesh, "text_encode"), 0);
}

TEST(GoldenText, AllMetricsPresentAndPassing) {
  Mesh mesh = test::single_rank_mesh();
  Recipe recipe;
  GoldenCase c;
  c.name = "text_encode";
  c.fixtures_dir = kFixtures;
  c.recipe = &recipe;
  c.mesh = &mesh;
  c.params = read_json_file(kFixtures + "/cases/text_encode.json", ExitCode::kInput);
  c.tensors = WeightStore::open(kFixtures + "/cases/text_encode.safetensors");
  golden_text_encode(c);
  std::vector<std::string> whats;
  for (auto& m : c.metrics) {
    whats.push_back(m.what);
    EXPECT_TRUE(m.pass) << m.what << " " << m.metric << " " << m.value << " tol " << m.tol;
    std::printf("%-18s %-10s %.4e (tol %.1e)\n", m.what.c_str(), m.metric.c_str(), m.value, m.tol);
  }
  EXPECT_EQ(whats, (std::vector<std::string>{"cleaned_prompts", "input_ids", "attention_mask", "last_hidden_state",
                                             "prompt_embeds"}));
}
