// Which hardware profile prices a recipe (plan/hardware_choice.h) and the --rank table's rows
// (mesh_ranking.h): the order --hardware, the recipe's `hardware`, the GPU's name, else exit 2
// listing the profiles; meshes equal but for dwdp_size share one row.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "plan/hardware_choice.h"
#include "plan/mesh_ranking.h"

using namespace vgen;

namespace {

const std::string kSrc = VGEN_SOURCE_DIR;

struct ShippedProfiles : ::testing::Test {
  void SetUp() override { setenv("VGEN_HARDWARE_DIR", (kSrc + "/recipes/hardware").c_str(), 1); }
  void TearDown() override { unsetenv("VGEN_HARDWARE_DIR"); }
  static std::vector<HardwareProfile> all() {
    std::vector<HardwareProfile> out;
    for (const auto& n : hardware_profile_names()) out.push_back(load_hardware_profile(n));
    return out;
  }
};

Recipe recipe(const std::vector<std::string>& sets) {
  std::vector<std::string> all = {"model=" + kSrc + "/recipes/models/wan2.1-t2v-14b", "device=cuda",
                                  "precision=bf16", "generation.height=720", "generation.width=1280",
                                  "generation.num_frames=81", "generation.num_inference_steps=40"};
  all.insert(all.end(), sets.begin(), sets.end());
  return parse_recipe("{}", "r.yaml", all);
}

std::string gpu_profile(const std::string& gpu) {
  auto p = profile_for_gpu(gpu, ShippedProfiles::all());
  return p ? p->name : "none";
}

TEST_F(ShippedProfiles, GpuNamesPickTheirProfile) {
  EXPECT_EQ(gpu_profile("NVIDIA H100 80GB HBM3"), "h100-hgx8");
  EXPECT_EQ(gpu_profile("NVIDIA H200"), "h200");
  EXPECT_EQ(gpu_profile("NVIDIA B200"), "b200-hgx8");
  EXPECT_EQ(gpu_profile("NVIDIA GB200"), "gb200-nvl72");  // "GB200" is longer than "B200"
  EXPECT_EQ(gpu_profile("NVIDIA H100 PCIe"), "none");     // another card than the profile's SXM5
  EXPECT_EQ(gpu_profile("NVIDIA A100-SXM4-80GB"), "none");
}

TEST_F(ShippedProfiles, EqualMatchesAreRefused) {
  std::vector<HardwareProfile> ps = all();
  HardwareProfile twin = ps.front();
  twin.name = "twin";
  ps.push_back(twin);
  try {
    profile_for_gpu(ps.front().detect.front(), ps);
    FAIL() << "two profiles matched equally and one was picked";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("twin"), std::string::npos) << e.what();
  }
}

TEST_F(ShippedProfiles, NamedThenRecipeThenGpu) {
  const Recipe with_key = recipe({"hardware=gb200-nvl72"});
  EXPECT_EQ(choose_hardware("h200", "--hardware", with_key, "NVIDIA B200").profile.name, "h200");
  const HardwareChoice by_key = choose_hardware("", "--hardware", with_key, "NVIDIA B200");
  EXPECT_EQ(by_key.profile.name, "gb200-nvl72");
  EXPECT_NE(by_key.source.find("`hardware`"), std::string::npos);
  const HardwareChoice by_gpu = choose_hardware("", "--hardware", recipe({}), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(by_gpu.profile.name, "h100-hgx8");
  EXPECT_NE(by_gpu.source.find("H100 80GB HBM3"), std::string::npos);
}

TEST_F(ShippedProfiles, NoChoiceListsTheProfiles) {
  for (const std::optional<std::string>& gpu : {std::optional<std::string>(), std::optional<std::string>("NVIDIA A100")}) {
    try {
      choose_hardware("", "--hardware", recipe({}), gpu);
      FAIL() << "a profile was picked without a name, a key or a matching GPU";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      const std::string m = e.what();
      for (const char* n : {"--hardware", "`hardware`", "b200-hgx8", "gb200-nvl72", "h100-hgx8", "h200"})
        EXPECT_NE(m.find(n), std::string::npos) << n << " not in: " << m;
      if (gpu) EXPECT_NE(m.find("NVIDIA A100"), std::string::npos) << m;
    }
  }
}

TEST_F(ShippedProfiles, UnknownRecipeProfileIsARecipeError) {
  try {
    choose_hardware("", "--hardware", recipe({"hardware=h900"}), std::nullopt);
    FAIL() << "an unknown profile name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(std::string(e.what()).find("h900"), std::string::npos);
  }
}

TEST_F(ShippedProfiles, RankRowsAreDistinctMeshes) {
  const Recipe r = recipe({});
  const PlanModel md = read_plan_model_configs(r);
  const auto ranked = rank_meshes(r, 8, md, load_hardware_profile("h200"), {});
  const std::string table = format_ranking(r, load_hardware_profile("h200"), ranked, 8, 1, 1000000);
  // Every mesh label (less its dwdp) appears on one row only, and every dwdp size tried is listed.
  size_t lines = 0;
  for (size_t at = 0; (at = table.find("\n", at)) != std::string::npos; ++at) ++lines;
  for (const Prediction& p : ranked) {
    std::string label = mesh_label(p.pc);
    label = label.substr(0, label.find(", dwdp"));
    const size_t first = table.find("  " + label + " ");
    ASSERT_NE(first, std::string::npos) << label;
    EXPECT_EQ(table.find("  " + label + " ", first + 1), std::string::npos) << label << " on two rows";
  }
  EXPECT_LT(lines, ranked.size());  // at 720p on 8 H200s DWDP changes memory only
  EXPECT_NE(table.find("1: "), std::string::npos);
  EXPECT_NE(table.find("  8: "), std::string::npos);
}

TEST(RecipeHardware, KeyIsParsedAndRecorded) {
  const Recipe r = parse_recipe("hardware: h100-hgx8\n", "r.yaml", {});
  EXPECT_EQ(r.hardware, "h100-hgx8");
  EXPECT_EQ(r.resolved["hardware"].get<std::string>(), "h100-hgx8");
  EXPECT_TRUE(parse_recipe("{}", "r.yaml", {}).resolved["hardware"].is_null());
}

}  // namespace
