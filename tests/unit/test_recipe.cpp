// Recipe parsing: valid recipes, every error kind naming its key path, --set overrides, frame rounding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/recipe.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

// Expects parse_recipe to throw `code` with every fragment in the message.
void expect_error(const std::string& yaml, const std::vector<std::string>& sets, ExitCode code,
                  const std::vector<std::string>& fragments) {
  try {
    parse_recipe(yaml, "r.yaml", sets);
    FAIL() << "no error for:\n" << yaml;
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(code)) << e.message();
    for (auto& f : fragments) EXPECT_NE(e.message().find(f), std::string::npos) << "'" << f << "' not in: " << e.message();
  }
}

const char* kFull = R"(model: models/wan
device: cuda
precision: bf16
generation:
  height: 720
  width: 1280
  num_frames: 81
  num_inference_steps: 40
  guidance_scale: 4.0
  guidance_scale_2: 3.0
  boundary_ratio: 0.875
  scheduler: euler
  flow_shift: 5.0
  negative_prompt: "blurry"
  max_sequence_length: 256
  seed: 7
  initial_latents: null
parallel_config:
  dp_size: 1
  cfg_size: 2
  ulysses_size: 4
  ring_size: 1
  attn2d_size: [3, 3]
  async_ulysses: true
  parallel_vae_size: 4
  parallel_vae_split_dim: height
  dwdp_size: 2
attention_config:
  backend: cudnn
output:
  dir: out
  fps: 24
  crf: 20
  save_tensors: true
  skip_existing: false
text:
  cache_embeddings: true
  cache_dir: cache
prompts: p.txt
)";

}  // namespace

TEST(Recipe, FullRecipe) {
  Recipe r = parse_recipe(kFull, "r.yaml", {});
  EXPECT_EQ(r.device, Device::kCUDA);
  EXPECT_TRUE(r.is_cuda());
  EXPECT_EQ(r.compute_dtype(), DType::kBF16);
  EXPECT_EQ(r.generation.height, 720);
  EXPECT_EQ(r.generation.width, 1280);
  EXPECT_EQ(r.generation.num_frames, 81);
  EXPECT_EQ(r.generation.num_inference_steps, 40);
  EXPECT_DOUBLE_EQ(r.generation.guidance_scale, 4.0);
  EXPECT_DOUBLE_EQ(*r.generation.guidance_scale_2, 3.0);
  EXPECT_DOUBLE_EQ(*r.generation.boundary_ratio, 0.875);
  EXPECT_EQ(r.generation.scheduler, SchedulerKind::kEuler);
  EXPECT_DOUBLE_EQ(*r.generation.flow_shift, 5.0);
  EXPECT_EQ(r.generation.negative_prompt, "blurry");
  EXPECT_EQ(r.generation.max_sequence_length, 256);
  EXPECT_EQ(r.generation.seed, 7);
  EXPECT_TRUE(r.generation.initial_latents.empty());
  EXPECT_EQ(r.parallel.cfg_size, 2);
  EXPECT_EQ(r.parallel.ulysses_size, 4);
  EXPECT_EQ(r.parallel.attn2d_size[0], 3);
  EXPECT_EQ(r.parallel.attn2d_size[1], 3);
  EXPECT_TRUE(r.parallel.async_ulysses);
  EXPECT_EQ(r.parallel.parallel_vae_size, 4);
  EXPECT_EQ(r.parallel.parallel_vae_split_dim, VaeSplitDim::kHeight);
  EXPECT_EQ(r.parallel.dwdp_size, 2);
  EXPECT_EQ(r.parallel.world_size(), 72);
  EXPECT_EQ(r.attention.backend, AttentionBackend::kCudnn);
  EXPECT_EQ(*r.output.fps, 24);
  EXPECT_EQ(r.output.crf, 20);
  EXPECT_TRUE(r.output.save_tensors);
  EXPECT_FALSE(r.output.skip_existing);
  EXPECT_TRUE(r.text.cache_embeddings);
  // Relative paths resolve against the current directory.
  fs::path cwd = fs::current_path();
  EXPECT_EQ(r.model, (cwd / "models/wan").string());
  EXPECT_EQ(r.output.dir, (cwd / "out").string());
  EXPECT_EQ(r.text.cache_dir, (cwd / "cache").string());
  EXPECT_EQ(r.prompts, (cwd / "p.txt").string());
  EXPECT_EQ(r.source_path, "r.yaml");
  // The resolved JSON mirrors the YAML layout with final values.
  EXPECT_EQ(r.resolved["generation"]["height"], 720);
  EXPECT_EQ(r.resolved["parallel_config"]["attn2d_size"], Json::array({3, 3}));
  EXPECT_EQ(r.resolved["model"], r.model);
  EXPECT_TRUE(r.resolved["generation"]["initial_latents"].is_null());
  EXPECT_EQ(r.resolved["text"]["cache_embeddings"], true);
}

TEST(Recipe, DefaultsWhenAbsent) {
  Recipe r = parse_recipe("model: /m\n", "r.yaml", {});
  GenerationConfig g;
  EXPECT_EQ(r.model, "/m");
  EXPECT_EQ(r.generation.height, g.height);
  EXPECT_EQ(r.generation.num_frames, g.num_frames);
  EXPECT_FALSE(r.generation.boundary_ratio.has_value());
  EXPECT_FALSE(r.generation.flow_shift.has_value());
  EXPECT_FALSE(r.output.fps.has_value());
  EXPECT_EQ(r.parallel.world_size(), 1);
  EXPECT_TRUE(r.resolved["generation"]["flow_shift"].is_null());
  // Empty text and empty sections are fine too.
  EXPECT_NO_THROW(parse_recipe("", "r.yaml", {}));
  EXPECT_NO_THROW(parse_recipe("generation:\noutput:\n", "r.yaml", {}));
}

TEST(Recipe, MalformedYamlNamesFileAndLine) {
  expect_error("model: /m\ngeneration:\n  height: [1, 2\n  width: 3\n", {}, ExitCode::kRecipe,
               {"r.yaml:", "malformed YAML"});
  try {
    parse_recipe("a: 1\nb: 2\nc: : :\n  - x\n", "bad.yaml", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find("bad.yaml:3"), std::string::npos) << e.message();
  }
  expect_error("- just\n- a list\n", {}, ExitCode::kRecipe, {"mapping"});
}

TEST(Recipe, UnknownKeysNameFullPath) {
  expect_error("parallel_config:\n  ulysess_size: 2\n", {}, ExitCode::kRecipe,
               {"r.yaml:2: parallel_config.ulysess_size: unknown key", "did you mean 'ulysses_size'"});
  expect_error("modle: /m\n", {}, ExitCode::kRecipe, {"modle: unknown key"});
  expect_error("generation:\n  frames: 9\n", {}, ExitCode::kRecipe, {"generation.frames: unknown key"});
  expect_error("output:\n  directory: x\n", {}, ExitCode::kRecipe, {"output.directory: unknown key"});
  expect_error("text:\n  cache: true\n", {}, ExitCode::kRecipe, {"text.cache: unknown key"});
  expect_error("zzzzzzzzzz: 1\n", {}, ExitCode::kRecipe, {"known keys: model"});
  expect_error("model: a\nmodel: b\n", {}, ExitCode::kRecipe, {"model: duplicate key"});
}

// text.device: auto follows the recipe's device; cpu keeps the text encoder on the host.
TEST(Recipe, TextDevice) {
  Recipe r = parse_recipe("device: cuda\n", "r.yaml", {});
  EXPECT_EQ(r.text.device, TextDevice::kAuto);
  EXPECT_TRUE(r.text_on_cuda());
  r = parse_recipe("device: cuda\ntext:\n  device: cpu\n", "r.yaml", {});
  EXPECT_FALSE(r.text_on_cuda());
  EXPECT_EQ(r.resolved["text"]["device"], "cpu");
  EXPECT_FALSE(parse_recipe("device: cpu\n", "r.yaml", {}).text_on_cuda());
  EXPECT_FALSE(parse_recipe("device: cuda\n", "r.yaml", {"text.device=cpu"}).text_on_cuda());
  expect_error("text:\n  device: gpu\n", {}, ExitCode::kRecipe, {"text.device"});
}

// cache_config.first_block_threshold: off by default, a number >= 0, resolved into timing.json, and
// refused together with DWDP (from the file or from --set, blamed on its source).
TEST(Recipe, FirstBlockCache) {
  EXPECT_EQ(parse_recipe("", "r.yaml", {}).cache.first_block_threshold, 0.0);
  Recipe r = parse_recipe("cache_config:\n  first_block_threshold: 0.08\n", "r.yaml", {});
  EXPECT_DOUBLE_EQ(r.cache.first_block_threshold, 0.08);
  EXPECT_DOUBLE_EQ(double(r.resolved["cache_config"]["first_block_threshold"]), 0.08);
  EXPECT_DOUBLE_EQ(parse_recipe("", "r.yaml", {"cache_config.first_block_threshold=0.2"}).cache.first_block_threshold,
                   0.2);
  expect_error("cache_config:\n  first_block_threshold: -0.1\n", {}, ExitCode::kRecipe,
               {"r.yaml:2: cache_config.first_block_threshold: must be a finite number >= 0"});
  expect_error("cache_config:\n  first_block_threshold: fast\n", {}, ExitCode::kRecipe,
               {"cache_config.first_block_threshold: expected a number"});
  expect_error("cache_config:\n  threshold: 0.1\n", {}, ExitCode::kRecipe, {"cache_config.threshold"});
  expect_error("cache_config:\n  first_block_threshold: 0.1\nparallel_config:\n  dwdp_size: 2\n", {},
               ExitCode::kRecipe, {"r.yaml:2: cache_config.first_block_threshold", "dwdp_size 2"});
  expect_error("parallel_config:\n  dwdp_size: 2\n", {"cache_config.first_block_threshold=0.1"}, ExitCode::kRecipe,
               {"--set cache_config.first_block_threshold=0.1", "dwdp_size 2"});
  // Off, it does not conflict with DWDP.
  EXPECT_EQ(parse_recipe("parallel_config:\n  dwdp_size: 2\n", "r.yaml", {}).parallel.dwdp_size, 2);
}

// runtime.collective_timeout_s: auto (0: derived from the work) by default, a number of seconds > 0,
// resolved into timing.json.
TEST(Recipe, RuntimeCollectiveTimeout) {
  Recipe d = parse_recipe("", "r.yaml", {});
  EXPECT_DOUBLE_EQ(d.runtime.collective_timeout_s, 0.0);
  EXPECT_EQ(std::string(d.resolved["runtime"]["collective_timeout_s"]), "auto");
  EXPECT_DOUBLE_EQ(parse_recipe("runtime:\n  collective_timeout_s: auto\n", "r.yaml", {}).runtime.collective_timeout_s,
                   0.0);
  EXPECT_DOUBLE_EQ(parse_recipe("", "r.yaml", {"runtime.collective_timeout_s=auto"}).runtime.collective_timeout_s, 0.0);
  Recipe r = parse_recipe("runtime:\n  collective_timeout_s: 20\n", "r.yaml", {});
  EXPECT_DOUBLE_EQ(r.runtime.collective_timeout_s, 20.0);
  EXPECT_DOUBLE_EQ(double(r.resolved["runtime"]["collective_timeout_s"]), 20.0);
  EXPECT_DOUBLE_EQ(parse_recipe("", "r.yaml", {"runtime.collective_timeout_s=2.5"}).runtime.collective_timeout_s, 2.5);
  EXPECT_DOUBLE_EQ(parse_recipe("runtime:\n", "r.yaml", {}).runtime.collective_timeout_s, 0.0);
  expect_error("runtime:\n  collective_timeout_s: 0\n", {}, ExitCode::kRecipe,
               {"r.yaml:2: runtime.collective_timeout_s: must be a number of seconds > 0 or auto, got 0"});
  expect_error("runtime:\n  collective_timeout_s: -5\n", {}, ExitCode::kRecipe,
               {"runtime.collective_timeout_s: must be a number of seconds > 0"});
  expect_error("runtime:\n  collective_timeout_s: .inf\n", {}, ExitCode::kRecipe,
               {"runtime.collective_timeout_s", "finite"});
  expect_error("runtime:\n  collective_timeout_s: long\n", {}, ExitCode::kRecipe,
               {"runtime.collective_timeout_s: expected a number"});
  expect_error("runtime:\n  collective_timeout: 20\n", {}, ExitCode::kRecipe,
               {"r.yaml:2: runtime.collective_timeout: unknown key", "did you mean 'collective_timeout_s'"});
  expect_error("runtime: 20\n", {}, ExitCode::kRecipe, {"runtime: expected a mapping"});
  expect_error("", {"runtime.timeout=20"}, ExitCode::kRecipe, {"--set runtime.timeout=20", "unknown key"});
  expect_error("", {"runtime.collective_timeout_s=0"}, ExitCode::kRecipe,
               {"--set runtime.collective_timeout_s=0: runtime.collective_timeout_s: must be a number of seconds > 0"});
}

TEST(Recipe, WrongTypes) {
  expect_error("generation:\n  height: abc\n", {}, ExitCode::kRecipe,
               {"r.yaml:2: generation.height: expected an integer"});
  expect_error("generation:\n  height: \"720\"\n", {}, ExitCode::kRecipe, {"generation.height: expected an integer"});
  expect_error("generation:\n  height: 7.5\n", {}, ExitCode::kRecipe, {"generation.height: expected an integer"});
  expect_error("generation:\n  guidance_scale: high\n", {}, ExitCode::kRecipe,
               {"generation.guidance_scale: expected a number"});
  expect_error("generation:\n  guidance_scale: .nan\n", {}, ExitCode::kRecipe, {"generation.guidance_scale", "finite"});
  expect_error("parallel_config:\n  async_ulysses: maybe\n", {}, ExitCode::kRecipe,
               {"parallel_config.async_ulysses: expected true or false"});
  expect_error("parallel_config:\n  attn2d_size: 3\n", {}, ExitCode::kRecipe,
               {"parallel_config.attn2d_size: expected a list [rows, cols]"});
  expect_error("parallel_config:\n  attn2d_size: [1, x]\n", {}, ExitCode::kRecipe,
               {"parallel_config.attn2d_size[1]: expected an integer"});
  expect_error("model: [a, b]\n", {}, ExitCode::kRecipe, {"model: expected a string, got a list"});
  expect_error("generation: 5\n", {}, ExitCode::kRecipe, {"generation: expected a mapping"});
  expect_error("generation:\n  seed: 99999999999999999999999\n", {}, ExitCode::kRecipe, {"generation.seed"});
}

TEST(Recipe, OutOfRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"parallel_config:\n  dp_size: 0\n", "parallel_config.dp_size: must be >= 1"},
      {"parallel_config:\n  ulysses_size: -2\n", "parallel_config.ulysses_size: must be >= 1"},
      {"parallel_config:\n  ring_size: 0\n", "parallel_config.ring_size: must be >= 1"},
      {"parallel_config:\n  attn2d_size: [0, 2]\n", "parallel_config.attn2d_size[0]: must be >= 1"},
      {"parallel_config:\n  parallel_vae_size: 0\n", "parallel_config.parallel_vae_size: must be >= 1"},
      {"parallel_config:\n  dwdp_size: 0\n", "parallel_config.dwdp_size: must be >= 1"},
      {"parallel_config:\n  cfg_size: 3\n", "parallel_config.cfg_size: must be 1 or 2"},
      {"parallel_config:\n  parallel_vae_split_dim: depth\n", "parallel_config.parallel_vae_split_dim: must be one of"},
      {"parallel_config:\n  ring_size: 2\n  attn2d_size: [2, 1]\n",
       "r.yaml:2: parallel_config.ring_size: ring_size 2 and attn2d_size"},
      {"generation:\n  height: 30\n", "generation.height: must be a positive multiple of 16"},
      {"generation:\n  width: 0\n", "generation.width: must be a positive multiple of 16"},
      {"generation:\n  width: -16\n", "generation.width: must be a positive multiple of 16"},
      {"generation:\n  num_inference_steps: 0\n", "generation.num_inference_steps: must be >= 1"},
      {"generation:\n  num_frames: 0\n", "generation.num_frames: must be >= 1"},
      {"generation:\n  max_sequence_length: 0\n", "generation.max_sequence_length: must be >= 1"},
      {"generation:\n  seed: -1\n", "r.yaml:2: generation.seed: must be an integer >= 0, got -1"},
      {"generation:\n  negative_prompt: \"a\\0b\"\n", "generation.negative_prompt: holds a NUL byte"},
      {"generation:\n  boundary_ratio: 1.5\n", "generation.boundary_ratio: must be in [0, 1]"},
      {"generation:\n  flow_shift: 0\n", "generation.flow_shift: must be > 0"},
      {"generation:\n  scheduler: ddim\n", "generation.scheduler: must be one of unipc | euler"},
      {"device: gpu\n", "device: must be one of cpu | cuda"},
      {"precision: fp16\n", "precision: must be one of fp32 | bf16"},
      {"attention_config:\n  backend: flash\n", "attention_config.backend: must be one of auto | native | cudnn"},
      {"output:\n  crf: 60\n", "output.crf: must be in [0, 51]"},
      {"output:\n  fps: 0\n", "output.fps: must be >= 1"},
  };
  for (auto& [yaml, frag] : cases) expect_error(yaml, {}, ExitCode::kRecipe, {frag});
  // A ring alone, or attn2d alone, is fine.
  EXPECT_EQ(parse_recipe("parallel_config:\n  ring_size: 4\n", "r.yaml", {}).parallel.cp_size(), 4);
  EXPECT_EQ(parse_recipe("parallel_config:\n  attn2d_size: [2, 3]\n", "r.yaml", {}).parallel.cp_size(), 6);
}

// Exclusive values that came from --set are blamed on the --set, not on the file.
TEST(Recipe, ExclusiveValuesNameTheirSource) {
  expect_error("model: /m\n", {"parallel_config.ring_size=2", "parallel_config.attn2d_size=[2,1]"}, ExitCode::kRecipe,
               {"--set parallel_config.ring_size=2: parallel_config.ring_size:", "are exclusive"});
}

TEST(Recipe, Overrides) {
  Recipe r = parse_recipe("model: /m\ngeneration:\n  height: 64\n", "r.yaml",
                          {"generation.height=128", "parallel_config.attn2d_size=[2,1]", "device=cuda",
                           "output.fps=8", "generation.guidance_scale_2=2.5", "generation.negative_prompt=no cats",
                           "text.cache_embeddings=true"});
  EXPECT_EQ(r.generation.height, 128);
  EXPECT_EQ(r.parallel.attn2d_size[0], 2);
  EXPECT_EQ(r.parallel.attn2d_size[1], 1);
  EXPECT_EQ(r.device, Device::kCUDA);
  EXPECT_EQ(*r.output.fps, 8);
  EXPECT_DOUBLE_EQ(*r.generation.guidance_scale_2, 2.5);
  EXPECT_EQ(r.generation.negative_prompt, "no cats");
  EXPECT_TRUE(r.text.cache_embeddings);
  EXPECT_EQ(r.resolved["parallel_config"]["attn2d_size"], Json::array({2, 1}));
  // Later overrides win; null resets an optional; a whole section can be set as a flow mapping.
  Recipe r2 = parse_recipe("generation:\n  flow_shift: 3.0\n", "r.yaml",
                           {"generation.seed=1", "generation.seed=2", "generation.flow_shift=null",
                            "parallel_config={cfg_size: 2, ulysses_size: 2}"});
  EXPECT_EQ(r2.generation.seed, 2);
  EXPECT_FALSE(r2.generation.flow_shift.has_value());
  EXPECT_EQ(r2.parallel.world_size(), 4);
  // Unknown override keys are errors that name the --set.
  expect_error("", {"parallel_config.ulysess_size=2"}, ExitCode::kRecipe,
               {"--set parallel_config.ulysess_size=2", "parallel_config.ulysess_size: unknown key"});
  expect_error("", {"foo=1"}, ExitCode::kRecipe, {"--set foo=1", "foo: unknown key"});
  expect_error("", {"model.path=1"}, ExitCode::kRecipe, {"model.path: unknown key"});
  expect_error("", {"generation.height.x=1"}, ExitCode::kRecipe, {"unknown key"});
  // Bad values through --set name the --set too.
  expect_error("", {"generation.height=abc"}, ExitCode::kRecipe,
               {"--set generation.height=abc", "generation.height: expected an integer"});
  expect_error("", {"parallel_config.attn2d_size=[2,"}, ExitCode::kRecipe, {"malformed YAML value"});
  expect_error("", {"parallel_config={ulysess_size: 2}"}, ExitCode::kRecipe,
               {"--set parallel_config=", "parallel_config.ulysess_size: unknown key"});
  expect_error("", {"generation.height"}, ExitCode::kUsage, {"key.path=value"});
}

TEST(Recipe, FrameRounding) {
  EXPECT_EQ(round_num_frames(81), 81);
  EXPECT_EQ(round_num_frames(80), 81);  // 80 // 4 * 4 + 1
  EXPECT_EQ(round_num_frames(82), 81);
  EXPECT_EQ(round_num_frames(84), 85);
  EXPECT_EQ(round_num_frames(1), 1);
  EXPECT_EQ(round_num_frames(2), 1);
  EXPECT_EQ(round_num_frames(4), 5);
  EXPECT_EQ(parse_recipe("generation:\n  num_frames: 16\n", "r.yaml", {}).generation.num_frames, 17);
  EXPECT_EQ(parse_recipe("", "r.yaml", {"generation.num_frames=10"}).generation.num_frames, 9);
  EXPECT_EQ(parse_recipe("", "r.yaml", {"generation.num_frames=10"}).resolved["generation"]["num_frames"], 9);
}

TEST(Recipe, LoadFromFile) {
  fs::path dir = fs::temp_directory_path() / ("vgen_recipe_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "r.yaml").string();
  std::ofstream(path) << "model: /m\ngeneration:\n  num_inference_steps: 3\n  bogus: 1\n";
  try {
    load_recipe(path, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find(path + ":4: generation.bogus: unknown key"), std::string::npos) << e.message();
  }
  std::ofstream(path) << "model: /m\ngeneration:\n  num_inference_steps: 3\n";
  Recipe r = load_recipe(path, {"generation.seed=5"});
  EXPECT_EQ(r.generation.num_inference_steps, 3);
  EXPECT_EQ(r.generation.seed, 5);
  EXPECT_EQ(r.source_path, path);
  try {
    load_recipe((dir / "missing.yaml").string(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find("missing.yaml"), std::string::npos);
  }
  fs::remove_all(dir);
}

TEST(Recipe, RepoRecipesParse) {
  for (const char* f :
       {"demo-cpu.yaml", "1gpu-14b.yaml", "1gpu-14b-fp8.yaml", "2gpu-14b.yaml", "8gpu-14b.yaml", "nvl72-14b.yaml",
        "1gpu-i2v-480p.yaml", "1gpu-i2v-720p.yaml", "8gpu-i2v-720p.yaml", "1gpu-flf2v-720p.yaml", "8gpu-i2v-a14b.yaml",
        "1gpu-ti2v-5b.yaml", "8gpu-ti2v-5b.yaml", "1gpu-cosmos3-nano-720p.yaml", "8gpu-cosmos3-nano-720p.yaml",
        "nvl72-cosmos3-super.yaml"}) {
    Recipe r = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/" + f, {});
    EXPECT_GE(r.parallel.world_size(), 1) << f;
  }
  Recipe demo = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/demo-cpu.yaml", {});
  EXPECT_EQ(demo.parallel.world_size(), 4);
  Recipe nvl = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/nvl72-14b.yaml", {});
  EXPECT_EQ(nvl.parallel.world_size(), 72);
  Recipe super = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/nvl72-cosmos3-super.yaml", {});
  EXPECT_EQ(super.parallel.world_size(), 72);
  EXPECT_EQ(super.parallel.parallel_vae_size, 8);
  Recipe fp8 = load_recipe(std::string(VGEN_SOURCE_DIR) + "/recipes/1gpu-14b-fp8.yaml", {});
  EXPECT_TRUE(fp8.is_fp8());
  EXPECT_TRUE(fp8.fp8.gemm_int8());
  EXPECT_TRUE(fp8.fp8.bf16_linears.empty());
}

// A string value that is not UTF-8 (a negative prompt) is a recipe error naming the key.
TEST(Recipe, StringsMustBeUtf8) {
  expect_error("model: /m\ngeneration:\n  negative_prompt: \"bad \xFF\"\n", {}, ExitCode::kRecipe,
               {"generation.negative_prompt", "not valid UTF-8"});
  expect_error("model: /m\n", {"generation.negative_prompt=caf\xE9"}, ExitCode::kRecipe,
               {"--set generation.negative_prompt=", "not valid UTF-8"});
}
