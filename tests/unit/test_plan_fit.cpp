// Out-of-memory advice (plan/plan_fit.h, core/device_fault.h): the plan's estimate, a mesh or
// dwdp_size that fits a GPU of a given size, and the message an out-of-memory carries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/device_fault.h"
#include "plan/plan_fit.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

// A Wan2.1-14B directory with configs only (the plan's sizes then come from config math).
struct FakeModel {
  fs::path dir;
  FakeModel() {
    dir = fs::temp_directory_path() / ("vgen_fit14b_" + std::to_string(getpid()));
    fs::create_directories(dir / "transformer");
    std::ofstream(dir / "model_index.json")
        << R"({"_class_name": "WanPipeline", "scheduler": ["diffusers", "UniPCMultistepScheduler"],
 "text_encoder": ["transformers", "UMT5EncoderModel"], "tokenizer": ["transformers", "T5TokenizerFast"],
 "transformer": ["diffusers", "WanTransformer3DModel"], "vae": ["diffusers", "AutoencoderKLWan"]})";
    std::ofstream(dir / "transformer" / "config.json")
        << R"({"_class_name": "WanTransformer3DModel", "attention_head_dim": 128, "ffn_dim": 13824, "freq_dim": 256,
 "in_channels": 16, "num_attention_heads": 40, "num_layers": 40, "out_channels": 16, "patch_size": [1, 2, 2],
 "text_dim": 4096, "qk_norm": "rms_norm_across_heads"})";
  }
  ~FakeModel() { fs::remove_all(dir); }
};

Recipe recipe_8gpu(const FakeModel& m, std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"model=" + m.dir.string()};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/8gpu-14b.yaml", sets);
}

}  // namespace

// A GPU a little too small for cfg 2 x ulysses 4: sharing the DiT weights (dwdp_size) is the nearest
// change on the same 8 ranks, and its estimate fits.
TEST(PlanFit, NamesDwdpThatFits) {
  FakeModel fake;
  Recipe r = recipe_8gpu(fake);
  const PlanModel md = read_plan_model(r);
  const double est = plan_fit_advice(r, 8, md, 0).estimate_bytes;
  ASSERT_GT(est, 10e9);  // 14B in bf16 and more
  const DeviceOomAdvice a = plan_fit_advice(r, 8, md, 0.8 * est);
  EXPECT_DOUBLE_EQ(a.estimate_bytes, est);
  EXPECT_NE(a.text.find("vgen plan estimates"), std::string::npos) << a.text;
  EXPECT_NE(a.text.find("on 8 rank(s)"), std::string::npos) << a.text;
  EXPECT_NE(a.text.find("does not fit"), std::string::npos) << a.text;
  EXPECT_NE(a.text.find("Fits (estimate"), std::string::npos) << a.text;
  EXPECT_NE(a.text.find("--set parallel_config.dwdp_size=2"), std::string::npos) << a.text;
  EXPECT_EQ(a.text.find("on 16 ranks"), std::string::npos) << a.text;
  // The named change does fit: its plan's estimate is within the budget.
  Recipe fix = recipe_8gpu(fake, {"parallel_config.dwdp_size=2"});
  EXPECT_LE(plan_memory_total(make_plan(fix, 8, md)), 0.95 * 0.8 * est);
}

// No mesh of 8 ranks fits a GPU of a third of the estimate: more ranks are named.
TEST(PlanFit, MoreRanksWhenNoMeshFits) {
  FakeModel fake;
  Recipe r = recipe_8gpu(fake, {"parallel_config.cfg_size=1", "parallel_config.ulysses_size=1",
                                "parallel_config.dp_size=8", "parallel_config.parallel_vae_size=1"});
  const PlanModel md = read_plan_model(r);
  const double est = plan_fit_advice(r, 8, md, 0).estimate_bytes;
  const DeviceOomAdvice a = plan_fit_advice(r, 8, md, 0.12 * est);
  EXPECT_NE(a.text.find("does not fit"), std::string::npos) << a.text;
  EXPECT_TRUE(a.text.find("Fits") != std::string::npos || a.text.find("No mesh of up to 32 ranks") != std::string::npos)
      << a.text;
  // Far too small: nothing fits, said as such.
  const DeviceOomAdvice none = plan_fit_advice(r, 8, md, 1e6);
  EXPECT_NE(none.text.find("No mesh of up to 32 ranks fits"), std::string::npos) << none.text;
  EXPECT_NE(none.text.find("text.device cpu"), std::string::npos) << none.text;  // UMT5 on the GPU
  EXPECT_EQ(none.text.find("precision bf16"), std::string::npos) << none.text;   // already bf16
}

// When the estimate fits, the message says the shortfall lies outside the plan.
TEST(PlanFit, EstimateFitsSaysSo) {
  FakeModel fake;
  Recipe r = recipe_8gpu(fake);
  const PlanModel md = read_plan_model(r);
  const double est = plan_fit_advice(r, 8, md, 0).estimate_bytes;
  const DeviceOomAdvice a = plan_fit_advice(r, 8, md, 2 * est);
  EXPECT_NE(a.text.find("That fits this GPU"), std::string::npos) << a.text;
}

// The out-of-memory error: exit code 11, the phase, sizes, free memory and the advisor's text.
TEST(DeviceFault, OutOfMemoryMessage) {
  FakeModel fake;
  Recipe r = recipe_8gpu(fake);
  set_device_oom_advisor(plan_oom_advisor(r, 8));
  try {
    DeviceAllocPhase outer("loading the model");
    DeviceAllocPhase inner("transformer");
    throw_device_oom("a device allocation (2.00 MiB rounded)", 2 << 20, 1 << 20, size_t(32) << 30, "vgen holds 31 GiB");
    FAIL() << "no throw";
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_EQ(e.code(), ExitCode::kDeviceOutOfMemory);
    EXPECT_EQ(int(e.code()), 11);
    EXPECT_EQ(e.requested(), size_t(2) << 20);
    EXPECT_EQ(e.total_bytes(), size_t(32) << 30);
    const std::string m = e.message();
    EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
    EXPECT_NE(m.find("while loading the model: transformer"), std::string::npos) << m;
    EXPECT_NE(m.find("2.00 MiB (2097152 bytes)"), std::string::npos) << m;
    EXPECT_NE(m.find("1.00 MiB free of 32.00 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("vgen holds 31 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("vgen plan estimates"), std::string::npos) << m;
    EXPECT_NE(m.find("Fits (estimate"), std::string::npos) << m;
    EXPECT_NE(std::string(e.what()).find("[rank "), std::string::npos) << e.what();
  }
  EXPECT_EQ(DeviceAllocPhase::current(), "");
  set_device_oom_advisor({});
}

// The test hooks throw the same errors as the device paths, on the named site, step and rank only.
TEST(DeviceFault, InjectionHooks) {
  setenv("VGEN_INJECT_OOM", "step", 1);
  EXPECT_NO_THROW(device_fault_inject("load"));
  EXPECT_NO_THROW(device_fault_inject("step", 2));
  EXPECT_THROW(device_fault_inject("step", 1), DeviceOutOfMemory);
  setenv("VGEN_INJECT_OOM", "load@5", 1);  // another rank (this process is rank 0)
  EXPECT_NO_THROW(device_fault_inject("load"));
  setenv("VGEN_INJECT_OOM", "load@0", 1);
  EXPECT_THROW(device_fault_inject("load"), DeviceOutOfMemory);
  unsetenv("VGEN_INJECT_OOM");
  setenv("VGEN_INJECT_CUDA_FAULT", "step:3", 1);
  EXPECT_NO_THROW(device_fault_inject("step", 2));
  try {
    device_fault_inject("step", 3);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kDistributed);
    EXPECT_NE(e.message().find("sticky CUDA error"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("cudaErrorIllegalAddress"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("denoising step 3"), std::string::npos) << e.message();
  }
  unsetenv("VGEN_INJECT_CUDA_FAULT");
  EXPECT_NO_THROW(device_fault_inject("step", 3));
}

// Sticky CUDA errors are told apart from recoverable ones (CUDA builds know the codes).
TEST(DeviceFault, StickyCodes) {
#ifdef VGEN_WITH_CUDA
  EXPECT_TRUE(cuda_error_is_sticky(700));   // cudaErrorIllegalAddress
  EXPECT_TRUE(cuda_error_is_sticky(719));   // cudaErrorLaunchFailure
  EXPECT_FALSE(cuda_error_is_sticky(2));    // cudaErrorMemoryAllocation
  EXPECT_FALSE(cuda_error_is_sticky(0));
#else
  EXPECT_FALSE(cuda_error_is_sticky(700));
#endif
  EXPECT_EQ(cuda_sticky_error(), "");  // no GPU context in this process
}
