#include "model/cosmos3/denoiser.h"

#include <filesystem>

#include "core/hash.h"
#include "model/cosmos3/latent_tokens.h"

namespace vgen {
namespace fs = std::filesystem;

Tensor cosmos3_ids_to_rows(const std::vector<int64_t>& ids, int max_len) {
  VGEN_CHECK(int64_t(ids.size()) <= max_len, ExitCode::kInput,
             "the Cosmos 3 prompt has {} tokens, more than generation.max_sequence_length {} (it is not truncated)",
             ids.size(), max_len);
  Tensor rows = Tensor::zeros({int64_t(max_len), 1}, DType::kF32);  // [L, 1]
  for (size_t i = 0; i < ids.size(); ++i) {
    VGEN_CHECK(ids[i] >= 0 && ids[i] < (int64_t(1) << 24) - 1, ExitCode::kInternal, "token id {} out of range",
               ids[i]);
    rows.f32()[i] = float(ids[i] + 1);
  }
  return rows;
}

std::vector<int64_t> cosmos3_rows_to_ids(const Tensor& rows) {
  VGEN_ASSERT(rows.ndim() == 2 && rows.dim(1) == 1 && rows.dtype() == DType::kF32 && rows.is_cpu(),
              "cosmos3 prompt rows {} are not [L, 1] host f32", rows.str());
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < rows.dim(0) && rows.f32()[i] != 0.0f; ++i) ids.push_back(int64_t(rows.f32()[i]) - 1);
  return ids;
}

namespace {

// What changes the ids: the tokenizer's files and the pipeline's default system prompt.
std::string tokenizer_identity(const std::string& pipeline_dir, const std::string& tokenizer_dir) {
  std::string id = "cosmos3-prompt-ids;";
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json"})
    id += fmt::format("{}={};", f, file_content_hash((fs::path(tokenizer_dir) / f).string()));
  return id + fmt::format("system_prompt={}", cosmos3_default_use_system_prompt(pipeline_dir));
}

}  // namespace

Cosmos3PromptEncoder::Cosmos3PromptEncoder(const std::string& pipeline_dir, const std::string& tokenizer_dir)
    : tok_(tokenizer_dir, cosmos3_default_use_system_prompt(pipeline_dir)),
      identity_(tokenizer_identity(pipeline_dir, tokenizer_dir)) {}

std::string Cosmos3PromptEncoder::normalize(const std::string& prompt) const {
  const Cosmos3PromptOptions o;  // the pipeline's defaults (189 frames, 720×1280, 24 fps)
  return normalize_for(prompt, {int(o.num_frames), int(o.height), int(o.width), o.fps, false});
}

std::string Cosmos3PromptEncoder::normalize_for(const std::string& prompt, const PromptContext& ctx) const {
  Cosmos3PromptOptions o;
  o.num_frames = ctx.num_frames;
  o.height = ctx.height;
  o.width = ctx.width;
  o.fps = ctx.fps;
  // The negative prompt's conversation is the uncond one (inverse templates).
  const Cosmos3Prompts p = ctx.negative ? tok_.tokenize("", prompt, o) : tok_.tokenize(prompt, std::nullopt, o);
  return ctx.negative ? p.uncond.text : p.cond.text;
}

PromptEmbeddings Cosmos3PromptEncoder::encode_normalized(const std::vector<std::string>& prompts, int max_len) const {
  PromptEmbeddings e;
  e.embeds = Tensor::zeros({int64_t(prompts.size()), int64_t(max_len), 1}, DType::kF32);  // [B, L, 1]
  for (size_t b = 0; b < prompts.size(); ++b) {
    std::vector<int64_t> ids = tok_.tokenizer().encode(prompts[b]);  // the rendered conversation
    ids.push_back(tok_.eos_id());
    ids.push_back(tok_.vision_start_id());
    e.embeds[int64_t(b)].copy_from(cosmos3_ids_to_rows(ids, max_len));
    e.lengths.push_back(int64_t(ids.size()));
  }
  return e;
}

Cosmos3Denoiser::Cosmos3Denoiser(std::shared_ptr<const Cosmos3Transformer> model, double fps,
                                 int temporal_compression, Device device)
    : model_(std::move(model)), fps_(fps), temporal_compression_(temporal_compression), device_(device) {}

bool Cosmos3Denoiser::on_device() const { return device_ != Device::kCPU; }

int64_t Cosmos3Denoiser::num_tokens(const Shape& s) const {
  const int64_t p = model_->config().latent_patch_size;
  VGEN_CHECK(s.size() == 5 && s[1] == out_channels(), ExitCode::kInput, "cosmos3: latents {} are not [B, {}, T, H, W]",
             shape_str(s), out_channels());
  return s[2] * ((s[3] + p - 1) / p) * ((s[4] + p - 1) / p);
}

std::unique_ptr<Conditioning> Cosmos3Denoiser::prepare(const Tensor& prompt_embeds, const Tensor& image_tokens) const {
  VGEN_CHECK(prompt_embeds.ndim() == 3 && prompt_embeds.dim(0) == 1 && prompt_embeds.dim(2) == 1, ExitCode::kInput,
             "cosmos3: the prompt's token rows must be [1, L, 1], got {}", prompt_embeds.str());
  VGEN_CHECK(!image_tokens.defined(), ExitCode::kInternal, "cosmos3 takes no image tokens");
  auto c = std::make_unique<Cosmos3Conditioning>();
  c->kv = model_->prefill(cosmos3_rows_to_ids(prompt_embeds[0].to(Device::kCPU).to(DType::kF32)));
  return c;
}

namespace {

// timestep [1] or [1, S] (0 on the tokens of clean frames) → the noisy frames and their timestep.
std::vector<int64_t> noisy_frames(const Tensor& timestep, int64_t T, int64_t S, float& t) {
  const Tensor ts = timestep.to(Device::kCPU).to(DType::kF32);
  std::vector<int64_t> noisy;
  if (ts.ndim() == 1) {
    VGEN_CHECK(ts.dim(0) == 1, ExitCode::kInput, "cosmos3: timestep {} for one video", ts.str());
    t = ts.f32()[0];
    for (int64_t f = 0; f < T; ++f) noisy.push_back(f);
    return noisy;
  }
  VGEN_CHECK(ts.ndim() == 2 && ts.dim(0) == 1 && ts.dim(1) == S && S % T == 0, ExitCode::kInput,
             "cosmos3: per-token timesteps {} for {} tokens", ts.str(), S);
  const int64_t per_frame = S / T;
  t = 0;
  for (int64_t f = 0; f < T; ++f) {
    const float v = ts.f32()[f * per_frame];
    if (v == 0.0f) continue;  // a clean (known) frame
    VGEN_CHECK(t == 0 || v == t, ExitCode::kInput, "cosmos3: the noisy frames' timesteps differ ({} and {})", t, v);
    t = v;
    noisy.push_back(f);
  }
  return noisy;
}

}  // namespace

Tensor Cosmos3Denoiser::forward_local(const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                                      const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache,
                                      const StepPolicy& step) const {
  const int64_t S = num_tokens(latents.shape());
  VGEN_CHECK(layout.degree == 1 && layout.tokens == S, ExitCode::kRecipe,
             "cosmos3: sequence parallelism is not implemented for this family (seq degree {})", layout.degree);
  VGEN_CHECK(latents.dim(0) == 1, ExitCode::kInput, "cosmos3 renders one video per forward, got latents {}",
             latents.str());
  VGEN_CHECK(cache == nullptr, ExitCode::kRecipe, "cosmos3: the first-block cache is not implemented for this family");
  const auto* c = dynamic_cast<const Cosmos3Conditioning*>(&cond);
  VGEN_ASSERT(c != nullptr, "cosmos3: conditioning of another family");
  Cosmos3VideoInput in;
  in.latents = latents;
  in.noisy_frames = noisy_frames(timestep, latents.dim(2), S, in.timestep);
  in.fps = fps_;
  in.temporal_compression = temporal_compression_;
  const Tensor v = model_->forward(c->kv, in);  // [1, C, T, H, W] f32
  const int p = model_->config().latent_patch_size;
  return latents_to_tokens(v, p).reshape({1, S, int64_t(p) * p * out_channels()});  // [1, S, p·p·C]
}

Tensor Cosmos3Denoiser::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  VGEN_CHECK(tokens.ndim() == 3 && tokens.dim(0) == 1, ExitCode::kInput, "cosmos3: tokens {} for one video",
             tokens.str());
  std::vector<int64_t> frames;
  for (int64_t f = 0; f < T; ++f) frames.push_back(f);
  return tokens_to_latents(tokens[0], model_->config().latent_patch_size, out_channels(), T, H, W, frames);
}

}  // namespace vgen
