// The YAML recipe (DESIGN.md "Recipe"): strictly validated, with `--set key.path=value` overrides.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

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
  std::string scheduler = "unipc";  // unipc | euler
  std::optional<double> flow_shift;
  std::string negative_prompt;
  int max_sequence_length = 512;
  int64_t seed = 42;
  std::string initial_latents;  // safetensors path with tensor `initial_latents`, or empty
};

struct ParallelConfig {
  int dp_size = 1;
  int cfg_size = 1;
  int ulysses_size = 1;
  int ring_size = 1;
  std::array<int, 2> attn2d_size = {1, 1};  // rows, cols
  bool async_ulysses = false;
  int parallel_vae_size = 1;
  std::string parallel_vae_split_dim = "width";  // width | height
  int dwdp_size = 1;
  // auto: true picks the mesh with the best predicted time for the world size at start
  // (pipeline/predict_rank.h); the size keys in `explicit_keys` (set in the recipe or by --set:
  // dp_size, cfg_size, ulysses_size, ring_size, attn2d_size, parallel_vae_size, dwdp_size) keep
  // their values and auto fills only the others.
  bool auto_mesh = false;
  std::vector<std::string> explicit_keys;
  bool is_explicit(const std::string& key) const {
    for (auto& k : explicit_keys)
      if (k == key) return true;
    return false;
  }
  int cp_size() const { return ring_size > 1 ? ring_size : attn2d_size[0] * attn2d_size[1]; }
  int seq_size() const { return cp_size() * ulysses_size; }
  int world_size() const { return dp_size * cfg_size * seq_size(); }
};

struct AttentionConfig {
  std::string backend = "auto";  // auto | native | cudnn
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

struct TextConfig {
  bool cache_embeddings = false;  // on-disk embedding cache
  std::string cache_dir;          // default: <output.dir>/.text_cache
  std::string device = "auto";    // auto (= the recipe's device) | cpu (host fp32, saves GPU memory)
};

// runtime: limits of the job as a whole.
struct RuntimeConfig {
  // A rank that waits longer than this in one collective, queue access or barrier ends the job
  // (exit 8) and names the ranks that stopped making progress (dist/watchdog.h). > 0.
  double collective_timeout_s = 600.0;
};

// fp8_config (docs/fp8.md): which parts of the DiT run in FP8 e4m3 with precision fp8 (bf16
// elsewhere; norms, modulation and softmax statistics fp32). Ignored, with a warning, under another
// precision (so `--set precision=bf16` renders the same recipe in bf16 for a comparison).
struct Fp8Config {
  bool attention = true;     // self-attention in fp8 (cross-attention stays bf16: 512 text keys)
  bool gemm = true;          // the blocks' linears attn1 q/k/v/o, attn2 q/o, ffn1, ffn2 in fp8
  // How the fp8 self-attention stores Q and K for Q·Kᵀ: "e4m3" (3 mantissa bits per value; the
  // faster kernel) or "int8" (7 bits over each 128-token block's range, as SageAttention: closer
  // where the scores spread, docs/fp8.md). P·V is e4m3 either way.
  std::string attention_qk = "e4m3";
  bool qk_int8() const { return attention_qk == "int8"; }
  // The linears' GEMMs (with `gemm`): "int8" (the own INT8 W8A8 kernel: 127 steps over each token's
  // and each output channel's range) or "e4m3" (cuBLASLt's FP8 GEMM, 3 mantissa bits). Per-token and
  // per-channel scales either way. int8 by default: on the H200 one 720p forward is 1.92% from bf16
  // against e4m3's 3.71%, and 2.6% faster (docs/fp8.md "INT8 GEMMs").
  std::string gemm_format = "int8";
  bool gemm_int8() const { return gemm_format == "int8"; }
  const char* gemm_label() const { return gemm_int8() ? "INT8" : "e4m3"; }  // the format as plans print it
  int bf16_first_steps = 0;  // the first N denoising steps run wholly in bf16
  int bf16_last_steps = 0;   // the last N denoising steps run wholly in bf16
  // Transformer blocks run wholly in bf16 at every step (their linears keep their bf16 weights, no
  // e4m3 copy): indices from 0, negative ones from the end (-1 the last block); checked against the
  // model's block count when it loads.
  std::vector<int> bf16_blocks{};
  // Transformer blocks whose linears run in bf16 at every step (no e4m3 copy) while their
  // self-attention stays as `attention` says: the GEMMs carry most of fp8's error, so this buys
  // accuracy for less time than bf16_blocks, the less the longer the sequence (docs/fp8.md
  // "Switches"). Same indices and check as bf16_blocks.
  std::vector<int> bf16_gemm_blocks{};
  // Block linears that run in bf16 in every block, by their module names in the checkpoint
  // ("attn2.to_q", "ffn.net.2", ...: kWanFp8LinearNames, checked when the model loads): for
  // accuracy where one kind of linear carries more of the error than its share of the time.
  std::vector<std::string> bf16_linears{};
  // Whether denoising step `index` (0-based) of `total` runs in fp8 (not one of the bf16 steps).
  bool step_in_fp8(int index, int total) const {
    return index >= bf16_first_steps && index < total - bf16_last_steps;
  }
  // Some step of a `total`-step loop runs in bf16 (the bf16 weights are needed beside the fp8 ones).
  bool has_bf16_steps() const { return bf16_first_steps > 0 || bf16_last_steps > 0; }
};

// One LoRA adapter merged into the DiT weights at load (model/wan/lora.h): W += scale·(alpha/rank)·B·A.
struct LoraEntry {
  std::string path;             // safetensors file (diffusers/PEFT or original Wan names)
  double scale = 1.0;           // the user strength (diffusers' set_adapters weight)
  std::string target = "both";  // transformer | transformer_2 | both (Wan 2.2 experts)
};

struct Recipe {
  std::string model;
  std::string device = "cpu";     // cpu | cuda
  std::string precision = "fp32"; // fp32 | bf16 | fp8
  GenerationConfig generation;
  ParallelConfig parallel;
  AttentionConfig attention;
  CacheConfig cache;
  OutputConfig output;
  TextConfig text;
  RuntimeConfig runtime;
  Fp8Config fp8;                // fp8_config: read with precision fp8 only
  std::vector<LoraEntry> lora;  // merged in the listed order
  bool lora_strict = true;      // false: keys that match no weight only warn
  std::string prompts;
  std::string source_path;  // the recipe file ("" for the built-in default)
  Json resolved;            // the recipe after overrides, as JSON, for timing.json

  bool is_cuda() const { return device == "cuda"; }
  // The text encoder runs on the GPU: device cuda and text.device auto.
  bool text_on_cuda() const { return is_cuda() && text.device != "cpu"; }
  bool is_fp8() const { return precision == "fp8"; }
  // The dtype between ops: bf16 for precision bf16, and for fp8 on the GPU (bf16 outside the fp8
  // GEMMs and attention); fp32 otherwise (the CPU emulates fp8 in fp32 around the quantisation).
  DType compute_dtype() const {
    return precision == "bf16" || (is_fp8() && is_cuda()) ? DType::kBF16 : DType::kF32;
  }
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
