#include "model/cosmos3/denoiser.h"

#include "model/cosmos3/latent_tokens.h"
#include "model/cosmos3/prompt_encoder.h"

namespace vgen {

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
  VGEN_CHECK(layout.tokens == S, ExitCode::kInternal, "cosmos3: a layout of {} tokens for {}", layout.tokens, S);
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
  in.fp8 = step.fp8;  // precision fp8's bf16_first_steps / bf16_last_steps
  // One rank: one attention block over [prompt | video]; sharded: the prompt K/V as the prefix
  // of the mesh's sequence-parallel attention.
  return model_->forward_tokens(c->kv, in, layout, layout.degree > 1 ? &attention : nullptr);  // [1, S_loc, P]
}

Tensor Cosmos3Denoiser::unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const {
  VGEN_CHECK(tokens.ndim() == 3 && tokens.dim(0) == 1, ExitCode::kInput, "cosmos3: tokens {} for one video",
             tokens.str());
  return tokens_to_video(tokens, model_->config().latent_patch_size, out_channels(), T, H, W);
}

}  // namespace vgen
