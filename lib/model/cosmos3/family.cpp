#include "model/cosmos3/family.h"

#include <filesystem>

#include "io/safetensors.h"
#include "model/cosmos3/config.h"
#include "model/cosmos3/weights.h"
#include "sched/pipeline_sigmas.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

Cosmos3Config transformer_config(const DiffusersDir& dir) {
  return Cosmos3Config::from_json(dir.component_config("transformer"), dir.component_path("transformer") + "/config.json");
}

// vae/config.json's integer key (the Wan 2.2 VAE's defaults: 16x spatial, 4x temporal).
int vae_int(const DiffusersDir& dir, const char* key, int fallback) {
  return json_get_or<int>(dir.component_config("vae"), key, fallback, dir.root() + "/vae/config.json");
}

bool index_flag(const DiffusersDir& dir, const char* key) {
  const Json& idx = dir.model_index();
  return idx.contains(key) && idx[key].is_boolean() && idx[key].get<bool>();
}

// The pipeline config of a distilled checkpoint: model_index.json, or modular_model_index.json where
// diffusers' Cosmos3DistilledModularPipeline reads `distilled_sigmas` and `is_distilled`; its
// scheduler config may flag it too (fixed_step_requires_explicit_sigmas).
struct DistilledKeys {
  Json sigmas;  // null when absent
  bool flagged = false;
  std::string source;
};

DistilledKeys distilled_keys(const DiffusersDir& dir) {
  DistilledKeys k;
  const fs::path modular = fs::path(dir.root()) / "modular_model_index.json";
  const Json mod = fs::is_regular_file(modular) ? read_json_file(modular.string(), ExitCode::kModel) : Json::object();
  for (const auto& [j, src] : {std::pair{&dir.model_index(), dir.root() + "/model_index.json"},
                               std::pair{&mod, modular.string()}}) {
    if (j->contains("is_distilled") && (*j)["is_distilled"].is_boolean() && (*j)["is_distilled"].get<bool>())
      k.flagged = true, k.source = src;
    if (j->contains("distilled_sigmas") && !(*j)["distilled_sigmas"].is_null())
      k.sigmas = (*j)["distilled_sigmas"], k.source = src;
  }
  // The distilled checkpoints' scheduler config says it samples only on sigmas it is given.
  if (dir.has_component("scheduler") && k.sigmas.is_null()) {
    const Json sc = dir.component_config("scheduler");
    if (sc.contains("fixed_step_requires_explicit_sigmas") && sc["fixed_step_requires_explicit_sigmas"].is_boolean() &&
        sc["fixed_step_requires_explicit_sigmas"].get<bool>())
      k.flagged = true, k.source = dir.root() + "/scheduler/scheduler_config.json (fixed_step_requires_explicit_sigmas)";
  }
  return k;
}

}  // namespace

PipelineSigmas cosmos3_pipeline_sigmas(const DiffusersDir& dir) {
  const DistilledKeys d = distilled_keys(dir);
  const bool native = index_flag(dir, "use_native_flow_schedule");
  VGEN_CHECK(!d.flagged || !d.sigmas.is_null(), ExitCode::kModel,
             "{}: a distilled checkpoint without distilled_sigmas (model_index.json or modular_model_index.json): it "
             "samples on a fixed sigma list, which it does not give",
             d.source);
  PipelineSigmas s;
  if (!d.sigmas.is_null()) {
    VGEN_CHECK(!native, ExitCode::kModel, "{}: distilled_sigmas and use_native_flow_schedule both set", dir.root());
    s = PipelineSigmas::from_scheduler_config(Json{{kPipelineSigmasKey, d.sigmas}}, d.source + " (distilled_sigmas)");
  } else if (native) {
    s.rule = PipelineSigmas::Rule::kNativeFlow;
  }
  return s;
}

Json cosmos3_scheduler_config(const DiffusersDir& dir) {
  return with_pipeline_sigmas(dir.component_config("scheduler"), cosmos3_pipeline_sigmas(dir));
}

std::string cosmos3_variant(const DiffusersDir& dir) {
  const Cosmos3Config c = transformer_config(dir);
  return fmt::format("Cosmos 3 T2V / I2V ({} style: {} layers, hidden {})",
                     c.hidden_act == Cosmos3Act::kRelu2 ? "Edge/Nemotron" : "Qwen3", c.num_hidden_layers,
                     c.hidden_size);
}

bool Cosmos3Family::accepts(const DiffusersDir& dir) const { return dir.pipeline_class() == "Cosmos3OmniPipeline"; }

ModelTraits Cosmos3Family::traits(const DiffusersDir& dir) const {
  const Cosmos3Config c = transformer_config(dir);
  ModelTraits t;
  t.family = name();
  t.variant = cosmos3_variant(dir);
  t.native_fps = c.base_fps;  // the fps the model was trained at (the pipeline's default 24)
  t.scale_spatial = vae_int(dir, "scale_factor_spatial", 16);
  t.scale_temporal = vae_int(dir, "scale_factor_temporal", 4);
  t.latent_channels = c.latent_channel;
  t.patch = {1, c.latent_patch_size, c.latent_patch_size};
  t.attention_heads = c.num_attention_heads;
  t.prompt_dim = 1;  // the prompt travels as token ids (denoiser.h)
  t.images = image_inputs(dir);
  return t;
}

ImageInputs Cosmos3Family::image_inputs(const DiffusersDir&) const {
  return {ImageConditioning::kOptional, false, false};
}

int Cosmos3Family::check_configs(const DiffusersDir& dir) const {
  for (const char* c : {"transformer", "text_tokenizer", "vae", "scheduler"}) {
    VGEN_CHECK(dir.has_component(c), ExitCode::kModel, "{}: model_index.json lists no '{}' component", dir.root(), c);
    dir.component_path(c);
  }
  cosmos3_pipeline_sigmas(dir);  // the pipeline's sigma keys are well formed
  const Json tc = dir.component_config("transformer");
  VGEN_CHECK(!tc.contains("quantization_config") || tc["quantization_config"].is_null(), ExitCode::kModel,
             "{}/transformer/config.json: quantization_config: quantized Cosmos 3 checkpoints are not rendered",
             dir.root());
  const Cosmos3Config c = transformer_config(dir);
  const std::string vae_src = dir.root() + "/vae/config.json";
  const int z_dim = json_get_or<int>(dir.component_config("vae"), "z_dim", 0, vae_src);
  VGEN_CHECK(z_dim == c.latent_channel, ExitCode::kModel, "{}: z_dim {} but the transformer's latent_channel is {}",
             vae_src, z_dim, c.latent_channel);
  dir.component_config("scheduler");
  const fs::path tok = fs::path(dir.component_path("text_tokenizer")) / "tokenizer.json";
  VGEN_CHECK(fs::is_regular_file(tok), ExitCode::kModel, "{}: text_tokenizer/tokenizer.json is missing", dir.root());
  return c.num_attention_heads;
}

void Cosmos3Family::check_weights(const DiffusersDir& dir) const {
  // The transformer's tensors by name and shape from the headers (no data is read).
  const WeightStore tr = WeightStore::open(dir.component_path("transformer"));
  check_cosmos3_weights(tr, transformer_config(dir));
  const WeightStore vae = WeightStore::open(dir.component_path("vae"));
  VGEN_CHECK(!vae.names().empty(), ExitCode::kModel, "{}: component 'vae' holds no tensors", dir.root());
}

void check_cosmos3_text_device(const Recipe& r) {
  VGEN_CHECK(r.text.device != TextDevice::kCpu, ExitCode::kRecipe,
             "text.device cpu: Cosmos 3 has no text encoder to run on the host; its understanding tower takes "
             "`auto` or `stream` (pinned host memory, copied to the GPU layer by layer for the prefill)");
}

void Cosmos3Family::check_recipe(const Recipe& r, const DiffusersDir& dir) const {
  check_cosmos3_text_device(r);
  const ParallelConfig& p = r.parallel;
  VGEN_CHECK(p.dwdp_size == 1 || !r.is_cuda() || !r.is_fp8() || !r.fp8.gemm, ExitCode::kRecipe,
             "precision fp8: fp8 GEMMs do not run with parallel_config.dwdp_size {} on device cuda (the streamed "
             "generation-layer slices hold no quantised copy); set fp8_config.gemm false or dwdp_size 1",
             p.dwdp_size);
  VGEN_CHECK(!r.is_fp4(), ExitCode::kRecipe, "precision fp4 is not implemented for Cosmos 3");
  VGEN_CHECK(r.is_cuda() || r.is_fp32() || r.is_fp8(), ExitCode::kRecipe,
             "precision {}: Cosmos 3 on the CPU computes in fp32 (precision fp8: its emulation)",
             precision_name(r.precision));
  VGEN_CHECK(!r.is_fp8() || r.fp8.bf16_linears.empty(), ExitCode::kRecipe,
             "fp8_config.bf16_linears: names the Wan DiT's block linears; Cosmos 3 takes bf16_blocks and "
             "bf16_gemm_blocks over its generation layers");
  VGEN_CHECK(r.lora.empty(), ExitCode::kRecipe, "lora: adapters are not implemented for Cosmos 3");
  VGEN_CHECK(r.cache.first_block_threshold <= 0, ExitCode::kRecipe,
             "cache_config.first_block_threshold: the first-block cache is not implemented for Cosmos 3");
  VGEN_CHECK(!r.generation.boundary_ratio, ExitCode::kRecipe,
             "generation.boundary_ratio: Cosmos 3 has one transformer (no expert switch)");
  const PipelineSigmas s = cosmos3_pipeline_sigmas(dir);
  if (s.rule != PipelineSigmas::Rule::kFixed) return;
  // A distilled checkpoint: its step count is its sigma list's, its guidance baked into the weights.
  const GenerationConfig& g = r.generation;
  VGEN_CHECK(size_t(g.num_inference_steps) == s.fixed.size(), ExitCode::kRecipe,
             "generation.num_inference_steps {}: this distilled checkpoint samples on its {} fixed sigmas ({}); set {}",
             g.num_inference_steps, s.fixed.size(), s.describe(), s.fixed.size());
  VGEN_CHECK(g.guidance_scale == 1.0 && g.guidance_scale_2.value_or(1.0) == 1.0, ExitCode::kRecipe,
             "generation.guidance_scale {}: a distilled checkpoint has its guidance baked into the weights; set 1",
             g.guidance_scale);
}

SizeLimits Cosmos3Family::size_limits(const DiffusersDir& dir) const {
  SizeLimits l;
  const fs::path vae_config = fs::path(dir.root()) / "vae" / "config.json";
  if (fs::is_regular_file(vae_config)) {  // a config-only copy for `vgen plan` may lack the VAE
    l.scale_spatial = vae_int(dir, "scale_factor_spatial", 16);
    l.scale_temporal = vae_int(dir, "scale_factor_temporal", 4);
  }
  // The latents are zero-padded to the patch, so any size renders; mRoPE sets no table size.
  l.patch = {1, 1, 1};
  return l;
}

}  // namespace vgen
