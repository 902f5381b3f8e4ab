// The preflight's size checks beyond the recipe's own (batch/preflight_sizes.h): a prompt line's
// num_frames fails that line alone, CFG on two ranks without guidance warns once, the plan's memory
// estimate against a GPU's free memory, and device: cuda where no GPU is usable (core/device_probe.h).
#include <gtest/gtest.h>

#include "batch/preflight_sizes.h"
#include "core/error.h"
#include "model/registry.h"
#include "pipeline/device_check.h"
#include "plan/plan.h"
#include "plan/plan_fit.h"

using namespace vgen;

namespace {

std::string source(const std::string& rel) { return std::string(VGEN_SOURCE_DIR) + "/" + rel; }

Recipe demo(std::vector<std::string> sets = {}) {
  sets.push_back("model=" + source("tests/golden/wan21-tiny"));
  return load_recipe(source("recipes/demo-cpu.yaml"), sets);
}

SizeLimits tiny_limits() {
  const DiffusersDir dir(source("tests/golden/wan21-tiny"));
  return model_family(dir).size_limits(dir);
}

// The message of `f`'s vgen::Error with `code`, or "" when it does not throw.
template <typename F>
std::string error_of(F&& f, ExitCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.message();
    return e.message();
  }
  return "";
}

}  // namespace

TEST(PreflightSizes, APromptLinesFramesFailThatLineAlone) {
  auto items = parse_prompts("{\"prompt\": \"a\", \"num_frames\": 33}\n"
                             "{\"prompt\": \"b\", \"num_frames\": 4097}\n"
                             "{\"prompt\": \"c\"}\n",
                             "p.jsonl");
  ASSERT_EQ(items.size(), 3u);
  preflight_sizes(demo(), tiny_limits(), "/x/p.jsonl", items);
  EXPECT_TRUE(items[0].ok()) << items[0].error;
  EXPECT_TRUE(items[2].ok()) << items[2].error;
  ASSERT_FALSE(items[1].ok());
  EXPECT_NE(items[1].error.find("/x/p.jsonl:2: num_frames: 4097 frames are 1025 latent frames"), std::string::npos)
      << items[1].error;
  EXPECT_NE(items[1].error.find("at most 4093 frames"), std::string::npos) << items[1].error;
}

TEST(PreflightSizes, CfgWithoutGuidanceWarnsOnce) {
  auto items = parse_prompts("a\n", "p.txt");
  for (const char* g : {"1", "0.5", "5"}) {
    testing::internal::CaptureStderr();
    preflight_sizes(demo({std::string("generation.guidance_scale=") + g}), tiny_limits(), "p.txt", items);
    const std::string err = testing::internal::GetCapturedStderr();
    const bool warned = err.find("parallel_config.cfg_size 2 with generation.guidance_scale") != std::string::npos;
    EXPECT_EQ(warned, std::string(g) != "5") << g << ": " << err;
    if (warned) {
      EXPECT_NE(err.find("set parallel_config.cfg_size 1"), std::string::npos) << err;
    }
  }
  testing::internal::CaptureStderr();  // cfg_size 1: nothing idles
  preflight_sizes(demo({"generation.guidance_scale=1", "parallel_config.cfg_size=1"}), tiny_limits(), "p.txt", items);
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("cfg_size 2"), std::string::npos);
}

TEST(PreflightSizes, MemoryEstimateAgainstTheGpusFreeMemory) {
  const Recipe r = demo({"device=cuda"});
  const PlanModel md = read_plan_model(r);
  const double est = plan_memory_total(make_plan(r, 4, md, false));
  ASSERT_GT(est, 0);
  DeviceMemoryInfo gpu{0, "Test GPU", size_t(est * 1.01), size_t(est * 4)};
  EXPECT_EQ(error_of([&] { check_device_memory(r, 4, md, gpu, 1); }, ExitCode::kDeviceOutOfMemory), "");
  // Two ranks on this GPU need twice the estimate.
  const std::string shared =
      error_of([&] { check_device_memory(r, 4, md, gpu, 2); }, ExitCode::kDeviceOutOfMemory);
  EXPECT_NE(shared.find("shared by 2 ranks"), std::string::npos) << shared;
  gpu.free_bytes = size_t(est * 0.5);
  const std::string msg = error_of([&] { check_device_memory(r, 4, md, gpu, 1); }, ExitCode::kDeviceOutOfMemory);
  for (const char* part : {"device memory: GPU 0 (Test GPU) has", "less than vgen plan's estimate",
                           "nothing was loaded", "vgen plan estimates", "on 4 rank(s)"})
    EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
}

// device: cuda with no usable GPU: a recipe error in a build without CUDA, exit 12 with the
// runtime's reason in a CUDA build on a host without one; `vgen plan` (not run) passes.
TEST(PreflightSizes, DeviceCudaWithoutAGpu) {
  const DeviceCount d = cuda_device_probe();
  if (d.count > 0) {  // a GPU host: nothing to refuse
    EXPECT_TRUE(d.reason.empty()) << d.reason;
    return;
  }
  EXPECT_FALSE(d.reason.empty());
  const Recipe r = demo({"device=cuda"});
#ifdef VGEN_WITH_CUDA
  const std::string msg = error_of([&] { preflight_device(r, true); }, ExitCode::kNoDevice);
  EXPECT_NE(msg.find("cudaGetDeviceCount"), std::string::npos) << msg;
#else
  const std::string msg = error_of([&] { preflight_device(r, true); }, ExitCode::kRecipe);
  EXPECT_NE(msg.find("VGEN_CUDA=OFF"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { throw_no_device(cuda_device_probe().reason); }, ExitCode::kNoDevice).find(
                "no usable GPU: this vgen was built without the CUDA backend"),
            std::string::npos);
#endif
  EXPECT_NO_THROW(preflight_device(r, false));
  EXPECT_EQ(int(ExitCode::kNoDevice), 12);
}
