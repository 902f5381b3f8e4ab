#include "model/wan/family.h"

#include <filesystem>

#include "io/safetensors.h"
#include "model/clip/golden_clip.h"
#include "model/text/tokenizer.h"
#include "model/wan/dit/lora.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_weights.h"
#include "model/wan/text/umt5_config.h"
#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_layers.h"
#include "ops/fp8.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

int expert_heads(const DiffusersDir& dir, const std::string& component) {
  Json c = dir.component_config(component);
  const int heads = json_get_or(c, "num_attention_heads", 40, dir.root() + "/" + component + "/config.json");
  VGEN_CHECK(heads >= 1, ExitCode::kModel, "{}/{}/config.json: num_attention_heads must be >= 1, got {}", dir.root(),
             component, heads);
  return heads;
}

// Wan 2.2 TI2V: per-token timesteps, the first frame's latents kept clean (model_index.json).
bool expand_timesteps(const DiffusersDir& dir) {
  const Json& idx = dir.model_index();
  return idx.contains("expand_timesteps") && idx["expand_timesteps"].is_boolean() &&
         idx["expand_timesteps"].get<bool>();
}

// Wan 2.1 FLF2V: the transformer's image positions come in pairs (pos_embed_seq_len), first and last.
bool pairs_images(const DiffusersDir& dir) {
  return WanTransformerConfig::from_json(dir.component_config("transformer"),
                                         dir.component_path("transformer") + "/config.json")
      .pos_embed_seq_len.has_value();
}

}  // namespace

std::vector<std::string> wan_expert_components(const DiffusersDir& dir) {
  std::vector<std::string> c = {"transformer"};
  if (dir.has_component("transformer_2")) c.push_back("transformer_2");
  return c;
}

bool wan_takes_image_tokens(const DiffusersDir& dir) {
  const std::string src = dir.component_path("transformer") + "/config.json";
  return WanTransformerConfig::from_json(dir.component_config("transformer"), src).has_image() &&
         dir.pipeline_class() == "WanImageToVideoPipeline" && !expand_timesteps(dir);
}

std::string wan_variant(const DiffusersDir& dir) {
  const bool two = dir.has_component("transformer_2");
  if (dir.pipeline_class() == "WanImageToVideoPipeline")
    return expand_timesteps(dir) ? "Wan 2.2 TI2V (WanImageToVideoPipeline)"
           : two                 ? "Wan 2.2 I2V-A14B (two experts)"
           : pairs_images(dir)   ? "Wan FLF2V (first and last frame)"
                                 : "Wan I2V (WanImageToVideoPipeline)";
  if (expand_timesteps(dir)) return "Wan 2.2 TI2V (expand_timesteps)";
  return two ? "Wan 2.2 T2V-A14B (two experts)" : "Wan T2V";
}

ImageInputs WanFamily::image_inputs(const DiffusersDir& dir) const {
  // diffusers' WanImageToVideoPipeline needs `image` and drops `last_image` under expand_timesteps
  // (prepare_latents); WanPipeline takes none, but a TI2V checkpoint (expand_timesteps) serves both
  // pipelines, so an image is optional there.
  // The CLIP tokens of a last image go with FLF2V's paired position embedding only: Wan 2.1 FLF2V
  // needs both frames, Wan 2.1 I2V takes the first alone (diffusers would pass it two images' tokens
  // for one video), Wan 2.2 I2V-A14B (no image tokens) either.
  if (dir.pipeline_class() == "WanImageToVideoPipeline") {
    if (expand_timesteps(dir)) return {ImageConditioning::kRequired, false, false};
    if (!wan_takes_image_tokens(dir)) return {ImageConditioning::kRequired, true, false};
    const bool paired = pairs_images(dir);
    return {ImageConditioning::kRequired, paired, paired};
  }
  return {expand_timesteps(dir) ? ImageConditioning::kOptional : ImageConditioning::kNone, false};
}

bool WanFamily::accepts(const DiffusersDir& dir) const {
  return dir.pipeline_class() == "WanPipeline" || dir.pipeline_class() == "WanImageToVideoPipeline";
}

ModelTraits WanFamily::traits(const DiffusersDir& dir) const {
  ModelTraits t;
  t.family = name();
  const std::string tsrc = dir.component_path("transformer") + "/config.json";
  const WanTransformerConfig tc = WanTransformerConfig::from_json(dir.component_config("transformer"), tsrc);
  const WanVaeConfig vc = parse_wan_vae_config(dir.component_config("vae"), dir.component_path("vae") + "/config.json");
  t.num_experts = int(wan_expert_components(dir).size());
  t.variant = wan_variant(dir);
  t.images = image_inputs(dir);
  t.latent_channels = tc.out_channels;  // I2V's input adds the condition channels
  t.patch = {int(tc.patch_size[0]), int(tc.patch_size[1]), int(tc.patch_size[2])};
  t.attention_heads = tc.num_attention_heads;
  t.scale_spatial = vc.scale_factor_spatial;
  t.scale_temporal = vc.scale_factor_temporal;
  // The 48-channel latents are the Wan 2.2 VAE's, whose models render at 24 fps; Wan 2.1 and
  // Wan 2.2 A14B at 16 (their diffusers examples' export fps).
  t.native_fps = vc.z_dim == 48 ? 24 : 16;
  const Json te = dir.component_config("text_encoder");
  t.prompt_dim = json_get_or<int64_t>(te, "d_model", 0);
  VGEN_CHECK(t.prompt_dim > 0, ExitCode::kModel, "{}/text_encoder/config.json: no d_model", dir.root());
  return t;
}

int WanFamily::check_configs(const DiffusersDir& dir) const {
  // Components the pipeline needs; transformer_2 when the checkpoint is a two-expert Wan 2.2.
  std::vector<std::string> comps = {"transformer", "text_encoder", "tokenizer", "vae", "scheduler"};
  if (dir.has_component("transformer_2")) comps.push_back("transformer_2");
  for (auto& c : comps) {
    VGEN_CHECK(dir.has_component(c), ExitCode::kModel, "{}: model_index.json lists no '{}' component", dir.root(), c);
    dir.component_path(c);  // the folder exists
  }
  for (auto& c : {"transformer", "text_encoder", "vae", "scheduler"}) dir.component_config(c);
  if (wan_takes_image_tokens(dir))  // Wan 2.1 I2V / FLF2V: the CLIP image encoder and its processor
    for (auto& c : {"image_encoder", "image_processor"}) {
      VGEN_CHECK(dir.has_component(c), ExitCode::kModel, "{}: the transformer has an image path (image_dim) but "
                 "model_index.json lists no '{}' component", dir.root(), c);
      dir.component_path(c);
    }
  std::string spiece = (fs::path(dir.component_path("tokenizer")) / "spiece.model").string();
  VGEN_CHECK(fs::is_regular_file(spiece), ExitCode::kModel, "{}: tokenizer/spiece.model is missing (the UMT5 "
             "SentencePiece model)", dir.root());
  const int heads = expert_heads(dir, "transformer");
  if (dir.has_component("transformer_2")) {
    const int h2 = expert_heads(dir, "transformer_2");
    VGEN_CHECK(h2 == heads, ExitCode::kModel, "{}: transformer has {} heads but transformer_2 has {}", dir.root(),
               heads, h2);
  }
  return heads;
}

void WanFamily::check_weights(const DiffusersDir& dir) const {
  std::vector<std::string> comps = wan_expert_components(dir);
  comps.insert(comps.begin() + 1, {"text_encoder", "vae"});
  for (auto& c : comps) {
    WeightStore ws = WeightStore::open(dir.component_path(c));
    VGEN_CHECK(!ws.names().empty(), ExitCode::kModel, "{}: component '{}' holds no tensors", dir.root(), c);
  }
  // Every expert's tensors by name, shape and dtype from the headers, so that a checkpoint that
  // lacks one is refused by every rank before the load (one message, preflight's agreement).
  for (const std::string& c : wan_expert_components(dir))
    check_wan_transformer_weights(WeightStore::open(dir.component_path(c)),
                                  WanTransformerConfig::from_json(dir.component_config(c),
                                                                  dir.component_path(c) + "/config.json"));
  // The VAE decoder's likewise (it loads on every rank of the VAE group).
  const WanVaeConfig vc = parse_wan_vae_config(dir.component_config("vae"), dir.component_path("vae") + "/config.json");
  const WeightStore vae = WeightStore::open(dir.component_path("vae"));
  VaeWeightSource headers = VaeWeightSource::headers_only(vae);
  VaeDecoderLayers layers;
  build_vae_layers(vc, headers, layers);
}

void check_wan_text_device(const Recipe& recipe) {
  VGEN_CHECK(recipe.text.device != TextDevice::kStream, ExitCode::kRecipe,
             "text.device stream: streams Cosmos 3's understanding tower for its prefill; Wan's text encoder "
             "takes `auto` or `cpu`");
}

void WanFamily::check_recipe(const Recipe& recipe, const DiffusersDir& dir) const {
  check_wan_text_device(recipe);
  if (!recipe.is_quantised()) return;
  // fp8_config.bf16_linears names and bf16_blocks / bf16_gemm_blocks against each expert's block
  // count, before any weight is read (every rank reads the same configs, so every rank fails alike).
  wan_fp8_linear_mask(recipe.fp8.bf16_linears);
  for (const std::string& c : wan_expert_components(dir))
    Fp8BlockLists{recipe.fp8.bf16_blocks, recipe.fp8.bf16_gemm_blocks}.check(
        WanTransformerConfig::from_json(dir.component_config(c), dir.component_path(c) + "/config.json").num_layers);
}

SizeLimits WanFamily::size_limits(const DiffusersDir& dir) const {
  SizeLimits l;
  // A config-only copy for `vgen plan` may lack the VAE, the tokenizer and the second expert's
  // folder (`vgen run` checked they exist): Wan 2.1's VAE factors, no token limit, the first expert.
  const fs::path vae_config = fs::path(dir.root()) / "vae" / "config.json";
  if (dir.has_component("vae") && fs::is_regular_file(vae_config)) {
    const WanVaeConfig vc = parse_wan_vae_config(dir.component_config("vae"), vae_config.string());
    l.scale_spatial = vc.scale_factor_spatial;
    l.scale_temporal = vc.scale_factor_temporal;
  }
  // Every expert's RoPE tables hold rope_max_seq_len positions per axis (dit/rope_tables.h, which
  // refuses a larger grid per prompt): the smallest of the experts bounds the video.
  for (const std::string& c : wan_expert_components(dir)) {
    if (c != "transformer" && !fs::is_regular_file(fs::path(dir.root()) / c / "config.json")) continue;
    const WanTransformerConfig tc =
        WanTransformerConfig::from_json(dir.component_config(c), dir.component_path(c) + "/config.json");
    l.patch = tc.patch_size;
    const int64_t n = tc.rope_positions();
    if (l.max_positions[0] == 0 || n < l.max_positions[0]) {
      l.max_positions = {n, n, n};
      l.positions_source = fmt::format("{}/config.json rope_max_seq_len", c);
    }
  }
  // UMT5's relative positions set no length; the tokenizer's model_max_length (512) is what the
  // encoder was trained on and what diffusers' pipeline passes.
  if (dir.has_component("tokenizer") && fs::is_directory(fs::path(dir.root()) / "tokenizer")) {
    l.max_text_tokens = tokenizer_max_length(dir.component_path("tokenizer"));
    l.text_source = "tokenizer/tokenizer_config.json model_max_length";
  }
  return l;
}

bool WanFamily::run_golden_case(const std::string& kind, GoldenCase& c) const {
  if (kind == "text_encode") golden_text_encode(c);
  else if (kind == "dit_forward") golden_dit_forward(c);
  else if (kind == "vae_decode" || kind == "vae22_decode") golden_vae_decode(c);
  else if (kind == "vae_encode") golden_vae_encode(c);
  else if (kind == "vae22_encode") golden_vae_encode(c);
  else if (kind == "clip_image_encode") golden_clip_image_encode(c);  // the I2V checkpoints' image_encoder
  else return false;
  return true;
}

}  // namespace vgen
