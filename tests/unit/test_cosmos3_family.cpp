// The Cosmos 3 family behind the seam (model/cosmos3/family.h, denoiser.h): the registry picks it from
// model_index.json, its traits come from the configs, what it does not render is refused by name
// (configs: kModel; recipes: kRecipe), and the weights are checked from the headers alone. The prompt
// side: test_cosmos3_prompt_encoder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error_test_util.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "model/registry.h"

using namespace vgen;
using vgen::testing::expect_error;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";
const std::string kTiny = kRoot + "/cosmos3-tiny";

// A copy of the tiny checkpoint in a temporary folder, removed at the end of the test.
struct TinyCopy {
  fs::path dir = fs::temp_directory_path() / ("vgen_cosmos3_" + std::to_string(getpid()));
  TinyCopy() {
    fs::remove_all(dir);
    fs::copy(kTiny, dir, fs::copy_options::recursive);
  }
  ~TinyCopy() { fs::remove_all(dir); }
  void patch_json(const std::string& file, const std::string& key, const Json& value) const {
    Json j = read_json_file((dir / file).string(), ExitCode::kModel);
    j[key] = value;
    std::ofstream((dir / file).string()) << j.dump(1);
  }
};

TEST(Cosmos3Family, RegisteredWithTraitsFromTheConfigs) {
  const DiffusersDir dir(kTiny);
  const ModelFamily& f = model_family(dir);
  EXPECT_EQ(f.name(), "cosmos3");
  const ModelTraits t = f.traits(dir);
  EXPECT_EQ(t.native_fps, 24);
  EXPECT_EQ(t.scale_spatial, 16);
  EXPECT_EQ(t.scale_temporal, 4);
  EXPECT_EQ(t.latent_channels, 48);
  EXPECT_EQ(t.patch, (std::array<int, 3>{1, 2, 2}));
  EXPECT_EQ(t.prompt_dim, 1);
  EXPECT_EQ(t.images.conditioning, ImageConditioning::kOptional);
  EXPECT_EQ(f.check_configs(dir), 4);
  EXPECT_NO_THROW(f.check_weights(dir));
}

TEST(Cosmos3Family, ConfigsItDoesNotRenderAreRefusedByName) {
  {  // is_distilled without its sigma list (test_cosmos3_schedule: the schedules it renders)
    TinyCopy c;
    c.patch_json("model_index.json", "is_distilled", true);
    const DiffusersDir dir(c.dir.string());
    expect_error([&] { model_family(dir).check_configs(dir); }, ExitCode::kModel, "distilled_sigmas");
  }
  {
    TinyCopy c;
    c.patch_json("transformer/config.json", "quantization_config", Json::object({{"quant_method", "modelopt"}}));
    const DiffusersDir dir(c.dir.string());
    expect_error([&] { model_family(dir).check_configs(dir); }, ExitCode::kModel, "quantization_config");
  }
}

TEST(Cosmos3Family, RecipesItDoesNotRenderAreRefused) {
  const DiffusersDir dir(kTiny);
  const ModelFamily& f = model_family(dir);
  Recipe r;
  r.model = kTiny;
  EXPECT_NO_THROW(f.check_recipe(r, dir));
  Recipe u = r;  // Ulysses, Ring and Attention2D shard the video tokens (the prompt K/V as the attention's prefix)
  u.parallel.ulysses_size = 2;
  EXPECT_NO_THROW(f.check_recipe(u, dir));
  u.parallel.ring_size = 2;
  EXPECT_NO_THROW(f.check_recipe(u, dir));
  Recipe a2d = r;
  a2d.parallel.attn2d_size = {2, 2};
  EXPECT_NO_THROW(f.check_recipe(a2d, dir));
  Recipe dwdp = u;  // DWDP shares the generation layers (host and device); the device slices hold no fp8 copy
  dwdp.parallel.dwdp_size = 2;
  EXPECT_NO_THROW(f.check_recipe(dwdp, dir));
  dwdp.device = Device::kCUDA;
  dwdp.precision = Precision::kBf16;
  EXPECT_NO_THROW(f.check_recipe(dwdp, dir));
  dwdp.precision = Precision::kFp8;
  expect_error([&] { f.check_recipe(dwdp, dir); }, ExitCode::kRecipe, "dwdp_size 2 on device cuda");
  dwdp.fp8.gemm = false;  // fp8 attention alone runs
  EXPECT_NO_THROW(f.check_recipe(dwdp, dir));
  Recipe fp8 = r;  // the generation tower in fp8 (the CPU emulates it)
  fp8.precision = Precision::kFp8;
  EXPECT_NO_THROW(f.check_recipe(fp8, dir));
  fp8.fp8.bf16_linears = {"ffn.net.2"};  // the Wan DiT's names
  expect_error([&] { f.check_recipe(fp8, dir); }, ExitCode::kRecipe, "bf16_linears");
  Recipe fp4 = r;
  fp4.precision = Precision::kFp4;
  expect_error([&] { f.check_recipe(fp4, dir); }, ExitCode::kRecipe, "fp4");
  Recipe lora = r;
  lora.lora.push_back({"x.safetensors", 1.0});
  expect_error([&] { f.check_recipe(lora, dir); }, ExitCode::kRecipe, "lora");
  Recipe fbc = r;
  fbc.cache.first_block_threshold = 0.1;
  expect_error([&] { f.check_recipe(fbc, dir); }, ExitCode::kRecipe, "first-block cache");
}

// A missing tensor is named by the headers-only check (nothing is read).
TEST(Cosmos3Family, WeightsAreCheckedFromTheHeaders) {
  TinyCopy c;
  const fs::path st = c.dir / "transformer" / "diffusion_pytorch_model.safetensors";
  const WeightStore src = WeightStore::open((c.dir / "transformer").string());
  std::vector<std::pair<std::string, Tensor>> keep;
  for (const std::string& n : src.names())
    if (n != "proj_out.bias") keep.push_back({n, src.get(n).clone()});
  fs::remove(st);
  save_safetensors(st.string(), keep);
  const DiffusersDir dir(c.dir.string());
  expect_error([&] { model_family(dir).check_weights(dir); }, ExitCode::kModel, "proj_out.bias");
}

}  // namespace
