// The Cosmos 3 family's facts for `vgen plan` (model/plan_facts.h): the transformer's sizes from its
// config and safetensors headers (the tensors a video render reads), the generation tower's linears
// per video token, the prompt as a prefix of the attention (PlanPromptPrefix: the understanding
// tower's prefill once per prompt and branch, its K/V kept for every step; priced at the recipe's
// max_sequence_length tokens, the longest prompt a line may have), the understanding tower's weights
// and its largest layer (resident on the device, or with text.device stream in pinned host memory
// and copied layer by layer for each prefill; `auto` is settled by the planner against a GPU's
// memory: plan/prefill_placement.h), the generation tower's layers as the DWDP blocks (the rest
// whole on every rank) and the Wan 2.2 VAE, priced by the lent planner as the Wan family prices it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

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

// The prompt's embedding table: the loader keeps it a host view of the file (a prompt's rows are
// read), so it is neither on the device nor in a streamed tower's pinned copy.
bool embedding(const std::string& name) { return name.rfind("embed_tokens", 0) == 0; }

// The understanding tower's layer tensors (weights.cpp kUnd): each layer's to_q/k/v/out, their
// norms, `mlp` and the two layer norms without the _moe_gen suffix.
bool understanding(const std::string& name) {
  if (name.find("_moe_gen") != std::string::npos || name.find("add_") != std::string::npos) return false;
  for (const char* p : {".to_q.", ".to_k.", ".to_v.", ".to_out.", ".norm_q.", ".norm_k.", ".mlp.", ".input_layernorm.",
                        ".post_attention_layernorm."})
    if (name.find(p) != std::string::npos) return true;
  return false;
}

// The generation tower's layer tensors (weights.cpp kGen): add_q/k/v_proj, to_add_out,
// norm_added_q/k and the *_moe_gen MLP and norms (norm_moe_gen, outside the layers, is no layer's).
bool generation(const std::string& name) {
  for (const char* p : {"_moe_gen.", ".add_", ".to_add_out.", ".norm_added_"})
    if (name.find(p) != std::string::npos) return true;
  return false;
}

// The layer index of a `layers.N.` tensor name, or -1.
int layer_of(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return -1;
  const size_t end = name.find('.', 7);
  return end == std::string::npos ? -1 : std::atoi(name.substr(7, end - 7).c_str());
}

// Σ 2·K·N of one tower's linears per token and layer (the two towers share the shapes).
double tower_linear_flops(const Cosmos3Config& c) {
  const double D = c.hidden_size, F = c.intermediate_size;
  const double attn = 2.0 * D * (2.0 * c.q_dim() + 2.0 * c.kv_dim());  // q, k, v in; o out
  return attn + 2.0 * D * F * (c.hidden_act == Cosmos3Act::kSilu ? 3 : 2);
}

void add_prompt_facts(const Recipe& recipe, const DiffusersDir& dir, const Cosmos3Config& c, size_t run_bytes,
                      PlanModel& m) {
  const GenerationConfig& g = recipe.generation;
  PlanPromptPrefix pp;
  pp.tokens = g.max_sequence_length;
  pp.tokens_source = "priced at generation.max_sequence_length";
  pp.prefill_flops_per_token = c.num_hidden_layers * tower_linear_flops(c);
  pp.kv_heads = c.num_key_value_heads;
  // Config math (the headers' count replaces it when read): each layer's linears and norms, the embedding.
  pp.layer_bytes = int64_t(run_bytes) * int64_t(tower_linear_flops(c) / 2 + 4 * c.hidden_size);
  pp.tower_bytes = int64_t(c.num_hidden_layers) * pp.layer_bytes;
  // stream: as asked; auto: resident until the planner weighs it against a GPU's memory.
  pp.streamed = recipe.is_cuda() && recipe.text.device == TextDevice::kStream;
  pp.why = !recipe.is_cuda() ? "device cpu: the host holds every weight"
           : pp.streamed     ? "text.device stream"
                             : "text.device auto, no GPU memory to weigh it against";
  m.prompt_prefix = pp;
  const double kv_per_token = 2.0 * c.num_hidden_layers * c.kv_dim() * double(run_bytes);
  m.facts.push_back(fmt::format("prefill: the understanding tower ({} layers) once per prompt and branch; its K/V "
                                "{:.1f} KiB per prompt token, kept for every step",
                                c.num_hidden_layers, kv_per_token / 1024.0));
  const fs::path tok = fs::path(dir.root()) / "text_tokenizer";
  if (!fs::is_regular_file(tok / "tokenizer.json")) return;
  Cosmos3PromptOptions o;
  o.num_frames = g.num_frames;
  o.height = g.height;
  o.width = g.width;
  o.fps = double(recipe.output.fps.value_or(c.base_fps));
  const Cosmos3PromptTokenizer t(tok.string(), cosmos3_default_use_system_prompt(dir.root()));
  const Cosmos3Prompts p = t.tokenize("", g.negative_prompt, o);
  m.facts.push_back(fmt::format("prompt tokens: {} + the prompt's own (system prompt, templates, eos, "
                                "<|vision_start|>); negative prompt: {}",
                                p.cond.ids.size(), p.uncond.ids.size()));
}

}  // namespace

PlanModel Cosmos3Family::plan_model(const Recipe& recipe, bool headers) const {
  VGEN_CHECK(!recipe.model.empty(), ExitCode::kRecipe, "{}: model: required key is missing", recipe.source_path);
  const DiffusersDir dir(recipe.model);
  check_cosmos3_text_device(recipe);
  const Cosmos3Config c =
      Cosmos3Config::from_json(dir.component_config("transformer"), dir.component_path("transformer") + "/config.json");
  const size_t run_bytes = recipe.compute_dtype() == DType::kBF16 ? 2 : 4;
  const ModelTraits t = traits(dir);
  PlanModel m;
  m.family = name();
  m.variant = t.variant;
  m.heads = c.num_attention_heads;
  m.kv_heads = c.num_key_value_heads;
  m.head_dim = c.head_dim;
  m.layers = c.num_hidden_layers;
  m.ffn = c.intermediate_size;
  m.in_channels = m.out_channels = c.latent_channel;
  m.text_dim = c.hidden_size;
  m.freq_dim = c.timestep_channels;
  m.patch = t.patch;
  m.pads_to_patch = true;  // latent_tokens.h: the grid is zero-padded to the 2×2 patch
  m.text_len = recipe.generation.max_sequence_length;
  m.te_source = "none (the prompt is token ids; the transformer's understanding tower encodes it)";
  const int64_t D = c.hidden_size, F = c.intermediate_size;
  m.block_linears = {{"add_q_proj", D, c.q_dim(), 0}, {"add_k_proj", D, c.kv_dim(), 0},
                     {"add_v_proj", D, c.kv_dim(), 0}, {"to_add_out", c.q_dim(), D, 1},
                     {"mlp_moe_gen.up_proj", D, F, 2}, {"mlp_moe_gen.down_proj", F, D, 3}};
  if (c.hidden_act == Cosmos3Act::kSilu) m.block_linears.push_back({"mlp_moe_gen.gate_proj", D, F, 2});
  add_prompt_facts(recipe, dir, c, run_bytes, m);
  const std::string tdir = dir.component_path("transformer");
  if (headers && has_safetensors(tdir)) {
    const WeightStore ws = WeightStore::open(tdir);
    int64_t und = 0;
    std::map<int, int64_t> und_layers, gen_layers;  // layer → its understanding / generation tensors' bytes
    for (const std::string& n : ws.names()) {
      if (unread(n)) continue;
      const int64_t k = ws.get(n).numel();
      const int64_t bytes = k * int64_t(n.find("time_embedder") != std::string::npos ? 4 : run_bytes);
      m.dit_params += k;
      if (embedding(n)) continue;  // a host view (its params counted, not its bytes)
      m.dit_bytes += bytes;
      const int l = layer_of(n);
      if (l >= 0 && generation(n)) gen_layers[l] += bytes;
      if (!understanding(n)) continue;
      und += bytes;
      if (l >= 0) und_layers[l] += bytes;
    }
    m.prompt_prefix->tower_bytes = und;
    int64_t& layer = m.prompt_prefix->layer_bytes;
    layer = 0;
    for (const auto& [l, bytes] : und_layers) layer = std::max(layer, bytes);
    m.dwdp_shared_bytes = 0;
    for (const auto& [l, bytes] : gen_layers) {
      m.dit_block_bytes = std::max(m.dit_block_bytes, bytes);
      m.dwdp_shared_bytes += bytes;
    }
    m.dit_source = "safetensors headers";
  } else {  // config math: both towers' layers, the embedding (a host view: params only), proj_in / proj_out
    const int64_t P = c.patch_latent_dim, embed = int64_t(c.vocab_size) * D;
    m.dit_params = int64_t(c.num_hidden_layers) * int64_t(2 * (tower_linear_flops(c) / 2 + 4 * D)) + embed +
                   2 * P * D + P + D;
    m.dit_bytes = (m.dit_params - embed) * int64_t(run_bytes);
    m.dit_source = "config math";
    m.dit_block_bytes = m.prompt_prefix->layer_bytes;  // the generation tower's layer has the understanding one's shapes
    m.dwdp_shared_bytes = int64_t(c.num_hidden_layers) * m.dit_block_bytes;
  }
  m.facts.push_back(fmt::format("prompt embedding table: {} × {} (a host view of the file, not counted on the GPU)",
                                c.vocab_size, c.hidden_size));
  if (vae_plan_) vae_plan_(dir, m, headers);  // after out_channels: the decoder's z_dim
  m.vae_spatial = t.scale_spatial;
  m.vae_temporal = t.scale_temporal;
  m.condition_frames_all = true;  // I2V: the image repeated over every frame, all encoded (image_condition.h)
  m.conditioning = "a first frame (optional); the VAE encodes it repeated over the video's frames; its latent "
                   "frame's tokens are clean (no timestep embedding)";
  return m;
}

}  // namespace vgen
