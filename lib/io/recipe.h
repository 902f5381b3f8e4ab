// The YAML recipe (docs/recipe.md): strictly validated, with `--set key.path=value` overrides.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

// The plain configs that layers below io use too (mesh, attention factory) live in config/.
#include "config/attention_config.h"
#include "config/fp8_config.h"
#include "config/parallel_config.h"
#include "config/precision.h"
#include "config/scheduler_kind.h"
#include "core/json.h"
#include "core/tensor.h"

namespace vgen {

struct GenerationConfig {
  int height = 480;
  int width = 832;
  int num_frames = 81;
  int num_inference_steps = 50;
  double guidance_scale = 5.0;
  std::optional<double> guidance_scale_2;
  std::optional<double> boundary_ratio;
  SchedulerKind scheduler = SchedulerKind::kUniPC;
  std::optional<double> flow_shift;
  std::string negative_prompt;
  int max_sequence_length = 512;
  int64_t seed = 42;
  // > 0: a line with an image renders at that image's aspect ratio within this many pixels instead
  // of height × width (docs/images.md "Size from the image"); 0: height × width for every line.
  int64_t image_max_area = 0;
  std::string initial_latents;  // safetensors path with tensor `initial_latents`, or empty
};

// First-Block Cache (cache_config): per CFG stream, a denoising step whose first block changes x
// by less than first_block_threshold (relative L1 against the last fully computed step, over the
// whole sequence) reuses that step's residual of the other blocks instead of running them.
// 0 (default) is off: every block runs every step. Approximate: speed traded for fidelity.
struct CacheConfig {
  double first_block_threshold = 0.0;
};

struct OutputConfig {
  std::string dir = "outputs";
  std::optional<int> fps;  // default: the model's native fps (16 for Wan 2.1 / 2.2 A14B)
  int crf = 18;
  bool save_tensors = false;
  bool skip_existing = true;
};

// Where the prompt side runs. Wan: auto (= the recipe's device) | cpu (the text encoder on the host
// in fp32, saves GPU memory). Cosmos 3: auto (resident, or stream when only the generation tower
// fits the GPU: plan/prefill_placement.h) | stream (the understanding tower in pinned host memory,
// copied to the GPU layer by layer for each prefill). Each family refuses the other's value.
enum class TextDevice : uint8_t { kAuto, kCpu, kStream };
inline constexpr Named<TextDevice> kTextDeviceNames[] = {
    {TextDevice::kAuto, "auto"}, {TextDevice::kCpu, "cpu"}, {TextDevice::kStream, "stream"}};

struct TextConfig {
  bool cache_embeddings = false;  // on-disk embedding cache
  std::string cache_dir;          // default: <output.dir>/.text_cache
  TextDevice device = TextDevice::kAuto;
};

// runtime: limits of the job as a whole.
struct RuntimeConfig {
  // A rank that waits longer than this in one collective, queue access or barrier ends the job
  // (exit 8) and names the rank it waits on (dist/watchdog.h). > 0; 0 (`auto`, the default): the
  // allowance is derived from the work (dist/watchdog_rule.h).
  double collective_timeout_s = 0.0;
};

// Which experts an adapter merges into: both, or the one whose component folder the recipe names
// (transformer: the first, transformer_2: the second of a two-expert checkpoint).
enum class LoraTarget : uint8_t { kBoth, kFirstExpert, kSecondExpert };
inline constexpr Named<LoraTarget> kLoraTargetNames[] = {
    {LoraTarget::kFirstExpert, "transformer"}, {LoraTarget::kSecondExpert, "transformer_2"}, {LoraTarget::kBoth, "both"}};
inline const char* lora_target_name(LoraTarget t) { return name_in(kLoraTargetNames, t); }
// Whether an adapter of `target` merges into expert `expert` (0 the first, 1 the second).
inline bool lora_targets_expert(LoraTarget target, int expert) {
  return target == LoraTarget::kBoth || int(target) - int(LoraTarget::kFirstExpert) == expert;
}

// One LoRA adapter merged into the DiT weights at load (model/wan/dit/lora.h): W += scale·(alpha/rank)·B·A.
struct LoraEntry {
  std::string path;    // safetensors file (diffusers/PEFT or original Wan names)
  double scale = 1.0;  // the user strength (diffusers' set_adapters weight)
  LoraTarget target = LoraTarget::kBoth;
};

inline constexpr Named<Device> kRecipeDeviceNames[] = {{Device::kCPU, "cpu"}, {Device::kCUDA, "cuda"}};

struct Recipe {
  std::string model;
  Device device = Device::kCPU;
  Precision precision = Precision::kFp32;
  GenerationConfig generation;
  ParallelConfig parallel;
  AttentionConfig attention;  // backend: attention_config; key_split: the environment (io/attention_tuning.h)
  CacheConfig cache;
  OutputConfig output;
  TextConfig text;
  RuntimeConfig runtime;
  // fp8_config with precision fp8; with precision fp4 the resolved fp4_config (NVFP4 GEMMs, no fp8
  // attention): the switches the quantised paths read either way.
  Fp8Config fp8;
  Fp8Config fp4 = fp4_config_defaults();  // fp4_config as read (copied into fp8 under precision fp4)
  std::vector<LoraEntry> lora;  // merged in the listed order
  bool lora_strict = true;      // false: keys that match no weight only warn
  std::string prompts;
  // The hardware profile that prices this recipe (`vgen plan --predict`, parallel_config.auto): a
  // name of recipes/hardware/ or a .yaml path; "" lets the machine's GPU pick (plan/hardware_choice.h).
  std::string hardware;
  std::string source_path;  // the recipe file ("" for the built-in default)
  Json resolved;            // the recipe after overrides, as JSON, for timing.json

  bool is_cuda() const { return device == Device::kCUDA; }
  // The text encoder runs on the GPU: device cuda and text.device not cpu (Wan; stream is Cosmos 3's).
  bool text_on_cuda() const { return is_cuda() && text.device != TextDevice::kCpu; }
  bool is_fp8() const { return precision == Precision::kFp8; }
  bool is_fp4() const { return precision == Precision::kFp4; }
  // fp8 or fp4: the DiT's block linears (and fp8's self-attention) quantised as `fp8` says.
  bool is_quantised() const { return is_fp8() || is_fp4(); }
  bool is_bf16() const { return precision == Precision::kBf16; }
  bool is_fp32() const { return precision == Precision::kFp32; }
  // The dtype between ops: bf16 for precision bf16, and for fp8 / fp4 on the GPU (bf16 outside the
  // quantised GEMMs and attention); fp32 otherwise (the CPU emulates them in fp32 around the
  // quantisation).
  DType compute_dtype() const { return is_bf16() || (is_quantised() && is_cuda()) ? DType::kBF16 : DType::kF32; }
};

// Parses a recipe file with overrides ("a.b=value", value parsed as YAML). Relative paths in the
// recipe (model, prompts, initial_latents, output.dir) resolve against the current directory.
// Errors: kRecipe naming the key path (e.g. "parallel_config.ulysses_size: expected an integer").
Recipe load_recipe(const std::string& path, const std::vector<std::string>& overrides);
// Same, from YAML text (path used in messages only).
Recipe parse_recipe(const std::string& yaml_text, const std::string& path,
                    const std::vector<std::string>& overrides);

// Wan's 4k+1 frame rule as diffusers applies it: n % 4 != 1 → n / 4 * 4 + 1 (at least 1).
int round_num_frames(int n);
// The recipe as JSON with the YAML key layout (what Recipe::resolved holds).
Json recipe_to_json(const Recipe& r);

}  // namespace vgen
