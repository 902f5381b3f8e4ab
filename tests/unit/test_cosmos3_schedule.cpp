// The Cosmos 3 pipeline's own sigmas (model/cosmos3/family.h cosmos3_pipeline_sigmas): none by default,
// use_native_flow_schedule's rule, a distilled checkpoint's fixed list (model_index.json or
// modular_model_index.json) with its stochastic Euler, the recipe checks of a distilled checkpoint
// (steps = its list, guidance 1) and the refusals of contradictory keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error_test_util.h"
#include "core/error.h"
#include "model/cosmos3/family.h"
#include "model/registry.h"
#include "sched/scheduler.h"

using namespace vgen;
using vgen::testing::expect_error;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3/cosmos3-tiny";
const Json kFixed = Json::array({1.0, 0.9375, 0.8333333333333334, 0.625});

// A copy of the tiny checkpoint in a temporary folder, removed at the end of the test.
struct TinyCopy {
  fs::path dir = fs::temp_directory_path() / ("vgen_cosmos3_sched_" + std::to_string(getpid()));
  TinyCopy() {
    fs::remove_all(dir);
    fs::copy(kTiny, dir, fs::copy_options::recursive);
  }
  ~TinyCopy() { fs::remove_all(dir); }
  void patch_json(const std::string& file, const std::string& key, const Json& value) const {
    const fs::path p = dir / file;
    Json j = fs::exists(p) ? read_json_file(p.string(), ExitCode::kModel) : Json::object();
    j[key] = value;
    std::ofstream(p.string()) << j.dump(1);
  }
  // The distilled layout diffusers reads: a FlowMatchEuler scheduler with stochastic sampling.
  void make_distilled(const std::string& index_file) const {
    patch_json(index_file, "is_distilled", true);
    patch_json(index_file, "distilled_sigmas", kFixed);
    std::ofstream((dir / "scheduler" / "scheduler_config.json").string())
        << Json{{"_class_name", "FlowMatchEulerDiscreteScheduler"}, {"num_train_timesteps", 1000}, {"shift", 1.0},
                {"stochastic_sampling", true}}
               .dump(1);
  }
};

TEST(Cosmos3Schedule, DefaultIsTheSchedulersOwn) {
  const DiffusersDir dir(kTiny);
  EXPECT_FALSE(cosmos3_pipeline_sigmas(dir).any());
  const Json j = cosmos3_scheduler_config(dir);
  EXPECT_FALSE(j.contains(kPipelineSigmasKey));
  auto s = make_scheduler(j);
  s->set_timesteps(3);
  EXPECT_EQ(s->timesteps()[0], 999.0);  // shift 3 of linspace(1, 1/N)
}

TEST(Cosmos3Schedule, NativeFlowSchedule) {
  TinyCopy c;
  c.patch_json("model_index.json", "use_native_flow_schedule", true);
  const DiffusersDir dir(c.dir.string());
  const ModelFamily& f = model_family(dir);
  EXPECT_NO_THROW(f.check_configs(dir));
  EXPECT_EQ(cosmos3_pipeline_sigmas(dir).rule, PipelineSigmas::Rule::kNativeFlow);
  auto s = make_scheduler(cosmos3_scheduler_config(dir));
  EXPECT_STREQ(s->name(), "unipc");
  s->set_timesteps(3);  // shift 3 of linspace(0.999, 0, 4)[:-1], as diffusers (test_sched_pipeline_sigmas)
  EXPECT_EQ(s->timesteps(), (std::vector<double>{999, 856, 599}));
  Recipe r;
  r.model = c.dir.string();
  EXPECT_NO_THROW(f.check_recipe(r, dir));  // any step count and guidance
}

TEST(Cosmos3Schedule, DistilledCheckpoint) {
  for (const char* index : {"model_index.json", "modular_model_index.json"}) {
    SCOPED_TRACE(index);
    TinyCopy c;
    c.make_distilled(index);
    const DiffusersDir dir(c.dir.string());
    const ModelFamily& f = model_family(dir);
    EXPECT_NO_THROW(f.check_configs(dir));
    const PipelineSigmas p = cosmos3_pipeline_sigmas(dir);
    ASSERT_EQ(p.rule, PipelineSigmas::Rule::kFixed);
    EXPECT_EQ(p.fixed, kFixed.get<std::vector<double>>());
    auto s = make_scheduler(cosmos3_scheduler_config(dir));
    EXPECT_STREQ(s->name(), "euler_sde");
    s->set_timesteps(4);
    EXPECT_EQ(s->timesteps()[1], 937.5);
    Recipe r;
    r.model = c.dir.string();
    expect_error([&] { f.check_recipe(r, dir); }, ExitCode::kRecipe, "num_inference_steps 50");
    r.generation.num_inference_steps = 4;
    expect_error([&] { f.check_recipe(r, dir); }, ExitCode::kRecipe, "guidance_scale 5");
    r.generation.guidance_scale = 1.0;
    EXPECT_NO_THROW(f.check_recipe(r, dir));
  }
}

TEST(Cosmos3Schedule, ContradictoryOrMalformedKeysAreRefused) {
  {
    TinyCopy c;
    c.make_distilled("model_index.json");
    c.patch_json("model_index.json", "use_native_flow_schedule", true);
    const DiffusersDir dir(c.dir.string());
    expect_error([&] { model_family(dir).check_configs(dir); }, ExitCode::kModel, "use_native_flow_schedule");
  }
  {
    TinyCopy c;
    c.patch_json("modular_model_index.json", "distilled_sigmas", Json::array({0.5, 0.9}));
    const DiffusersDir dir(c.dir.string());
    expect_error([&] { model_family(dir).check_configs(dir); }, ExitCode::kModel, "distilled_sigmas");
  }
}

}  // namespace
