// The Cosmos 3 family's facts for `vgen plan` (model/plan_facts.h): the transformer's sizes from its
// config and safetensors headers (the tensors a video render reads), the generation tower's linears
// per video token, and the prompt side: the rendered prompts' tokens and their prefill (the
// understanding tower once per prompt, its K/V kept for every step). The time model (--predict) has
// no terms for this family yet: its VAE work is left empty and --predict refuses.
#include <filesystem>

#include "io/safetensors.h"
#include "model/cosmos3/config.h"
#include "model/cosmos3/family.h"
#include "model/cosmos3/prompt.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// Tensors a video render never reads (weights.h).
bool unread(const std::string& name) {
  for (const char* p : {"lm_head", "sound", "action", "norm."})
    if (name.rfind(p, 0) == 0 || name.find(std::string(".") + p) != std::string::npos) return true;
  return false;
}

void add_prompt_facts(const Recipe& recipe, const DiffusersDir& dir, const Cosmos3Config& c, size_t run_bytes,
                      PlanModel& m) {
  const fs::path tok = fs::path(dir.root()) / "text_tokenizer";
  if (!fs::is_regular_file(tok / "tokenizer.json")) return;
  const GenerationConfig& g = recipe.generation;
  Cosmos3PromptOptions o;
  o.num_frames = g.num_frames;
  o.height = g.height;
  o.width = g.width;
  o.fps = double(recipe.output.fps.value_or(c.base_fps));
  const Cosmos3PromptTokenizer t(tok.string(), cosmos3_default_use_system_prompt(dir.root()));
  const Cosmos3Prompts p = t.tokenize("", g.negative_prompt, o);
  const int64_t cond = int64_t(p.cond.ids.size()), uncond = int64_t(p.uncond.ids.size());
  const double kv_per_token = 2.0 * c.num_hidden_layers * c.kv_dim() * double(run_bytes);
  m.facts.push_back(fmt::format("prompt tokens: {} + the prompt's own (system prompt, templates, eos, "
                                "<|vision_start|>); negative prompt: {}",
                                cond, uncond));
  m.facts.push_back(fmt::format("prefill: the understanding tower ({} layers) once per prompt and branch; its K/V "
                                "{:.1f} KiB per prompt token, kept for every step",
                                c.num_hidden_layers, kv_per_token / 1024.0));
}

}  // namespace

PlanModel Cosmos3Family::plan_model(const Recipe& recipe, bool headers) const {
  VGEN_CHECK(!recipe.model.empty(), ExitCode::kRecipe, "{}: model: required key is missing", recipe.source_path);
  const DiffusersDir dir(recipe.model);
  const Cosmos3Config c =
      Cosmos3Config::from_json(dir.component_config("transformer"), dir.component_path("transformer") + "/config.json");
  const size_t run_bytes = recipe.compute_dtype() == DType::kBF16 ? 2 : 4;
  const ModelTraits t = traits(dir);
  PlanModel m;
  m.family = name();
  m.variant = t.variant;
  m.heads = c.num_attention_heads;
  m.head_dim = c.head_dim;
  m.layers = c.num_hidden_layers;
  m.ffn = c.intermediate_size;
  m.in_channels = m.out_channels = c.latent_channel;
  m.text_dim = c.hidden_size;
  m.freq_dim = c.timestep_channels;
  m.patch = t.patch;
  m.pads_to_patch = true;  // latent_tokens.h: the grid is zero-padded to the 2×2 patch
  m.vae_spatial = t.scale_spatial;
  m.vae_temporal = t.scale_temporal;
  m.text_len = recipe.generation.max_sequence_length;
  const std::string tdir = dir.component_path("transformer");
  if (headers && has_safetensors(tdir)) {
    const WeightStore ws = WeightStore::open(tdir);
    for (const std::string& n : ws.names()) {
      if (unread(n)) continue;
      const int64_t k = ws.get(n).numel();
      m.dit_params += k;
      m.dit_bytes += k * int64_t(n.find("time_embedder") != std::string::npos ? 4 : run_bytes);
    }
    m.dit_source = "safetensors headers";
  } else {
    m.dit_source = "not computed (no safetensors read)";
  }
  m.dit_block_bytes = m.layers ? m.dit_bytes / m.layers : 0;
  const std::string vdir = dir.component_path("vae");
  if (headers && has_safetensors(vdir)) m.vae_bytes = WeightStore::open(vdir).total_numel() * 4;  // decodes in fp32
  m.te_source = "none (the prompt is token ids; the transformer's understanding tower encodes it)";
  const int64_t D = c.hidden_size, F = c.intermediate_size;
  m.block_linears = {{"add_q_proj", D, c.q_dim(), 0}, {"add_k_proj", D, c.kv_dim(), 0},
                     {"add_v_proj", D, c.kv_dim(), 0}, {"to_add_out", c.q_dim(), D, 1},
                     {"mlp_moe_gen.up_proj", D, F, 2}, {"mlp_moe_gen.down_proj", F, D, 3}};
  if (c.hidden_act == Cosmos3Act::kSilu) m.block_linears.push_back({"mlp_moe_gen.gate_proj", D, F, 2});
  add_prompt_facts(recipe, dir, c, run_bytes, m);
  return m;
}

}  // namespace vgen
