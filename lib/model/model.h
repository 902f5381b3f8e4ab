// The model seam (docs/architecture.md "The model seam", docs/adding_a_model.md): what the
// generation pipeline, the batch runtime and the planner know of a model family. A family (Wan
// today, lib/model/wan/) implements these interfaces once; the registry (model/registry.h) picks it
// from the checkpoint's model_index.json and configs. Nothing above lib/model sees a family's types.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/tensor.h"
#include "dist/communicator.h"
#include "dist/weight_stream.h"
#include "parallel/seq_attention.h"

namespace vgen {

class FirstBlockCache;   // model/first_block_cache.h
class DitPhaseProfiler;  // model/phase_profiler.h

// Which still images a checkpoint is conditioned on (docs/batch.md "Image inputs"), from its configs.
enum class ImageConditioning : uint8_t {
  kNone,      // text-to-video only (Wan: WanPipeline)
  kOptional,  // text- or image-to-video (Wan 2.2 TI2V: WanPipeline with expand_timesteps)
  kRequired,  // image-to-video (Wan: WanImageToVideoPipeline)
};
const char* image_conditioning_name(ImageConditioning c);  // "none", "optional", "required"

// The still images a checkpoint takes on a prompt line (ModelFamily::image_inputs).
struct ImageInputs {
  ImageConditioning conditioning = ImageConditioning::kNone;
  bool last_image = false;           // a last frame too (Wan: WanImageToVideoPipeline without expand_timesteps)
  bool last_image_required = false;  // every line needs one (Wan 2.1 FLF2V: its image positions are pairs)
};

// Facts of a checkpoint that the pipeline and the planner need, read from its configs.
struct ModelTraits {
  std::string family;   // registry name, e.g. "wan"
  std::string variant;  // what a user reads, e.g. "Wan 2.1 T2V (WanPipeline)"
  int native_fps = 16;
  int scale_spatial = 8, scale_temporal = 4;  // VAE compression; frames are 1 + k·scale_temporal
  int64_t latent_channels = 16;
  std::array<int, 3> patch = {1, 2, 2};  // DiT patch (t, h, w) over the latent grid
  int num_experts = 1;
  int attention_heads = 0;  // self-attention heads of the DiT (Ulysses must divide them)
  int64_t prompt_dim = 0;   // width D of the prompt embeddings [B, L, D] the experts take
  ImageInputs images;       // the first / last frame it is conditioned on

  // [B, C, (F−1)/scale_temporal + 1, height/scale_spatial, width/scale_spatial].
  Shape latent_shape(int64_t batch, int num_frames, int height, int width) const;
};

// The encoded prompts: embeddings [B, L, D] host f32 and each prompt's real length.
struct PromptEmbeddings {
  Tensor embeds;                 // [B, L, D]
  std::vector<int64_t> lengths;  // real rows per prompt (rows past it are zero)
};

// What a prompt is encoded for: the video it conditions and its role. A family whose prompt text
// depends on them (Cosmos 3 appends duration and resolution sentences, their inverse to the negative
// prompt) reads it in normalize_for; the others ignore it.
struct PromptContext {
  int num_frames = 0, height = 0, width = 0;
  double fps = 0;         // the output's frame rate
  bool negative = false;  // the negative (unconditional) prompt
};

// The prompt side (Wan: prompt cleaning, T5 tokenizer, UMT5). Runs on the replica leader.
class PromptEncoder {
 public:
  virtual ~PromptEncoder() = default;
  virtual int64_t hidden_size() const = 0;
  // The prompt as the encoder will read it (the text cache keys on it).
  virtual std::string normalize(const std::string& prompt) const = 0;
  // The prompt as the encoder will read it for `ctx`; by default the context changes nothing.
  virtual std::string normalize_for(const std::string& prompt, const PromptContext& ctx) const {
    return normalize(prompt);
  }
  // Already normalised prompts → [B, max_len, D]; each prompt encoded by itself, so its rows do not
  // depend on the others.
  virtual PromptEmbeddings encode_normalized(const std::vector<std::string>& prompts, int max_len) const = 0;
  // What makes two encoders' embeddings differ (weights, tokenizer, device and precision): the
  // text cache never mixes entries of different identities.
  virtual std::string identity() const = 0;
};

// Conditioning of one prompt batch prepared once per expert and reused by every step (Wan: the
// text K/V of every block). Opaque to the pipeline.
struct Conditioning {
  virtual ~Conditioning() = default;
};

// What the denoising loop decides for one step: precision fp8's bf16_first_steps / bf16_last_steps
// run some steps wholly in bf16 (fp8 false). A model without fp8 ignores it.
struct StepPolicy {
  bool fp8 = true;
};

// One DiT expert written for sequence sharding (docs/architecture.md "One denoising step").
class Denoiser {
 public:
  virtual ~Denoiser() = default;
  // Post-patch token count S of latents [B, C, T, H, W] (shape checked).
  virtual int64_t num_tokens(const Shape& latents_shape) const = 0;
  virtual int64_t out_channels() const = 0;
  // prompt embeddings [B, L, D] → this expert's conditioning; image_tokens [n, L_img, D_img] (an
  // image-conditioned family's ImageCondition::image_tokens, or undefined) join it.
  virtual std::unique_ptr<Conditioning> prepare(const Tensor& prompt_embeds,
                                                const Tensor& image_tokens = Tensor()) const = 0;
  // latents [B, C, T, H, W] (identical on every rank), timestep [B] or, for a model that takes one
  // per post-patch token, [B, S] (every rank passes the whole of it) → this rank's output tokens
  // [B, layout.local(), P] for global tokens [layout.begin(), layout.end()); self-attention through
  // `attention`; `cache` (may be null) the first-block cache of this stream.
  // `step`: what this denoising step runs in.
  virtual Tensor forward_local(const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                               const SeqLayout& layout, SeqAttention& attention, FirstBlockCache* cache = nullptr,
                               const StepPolicy& step = {}) const = 0;
  // tokens [B, S, P] (padding removed) → [B, C_out, T, H, W].
  virtual Tensor unpatchify(const Tensor& tokens, int64_t T, int64_t H, int64_t W) const = 0;
  // GPU time per phase of later forwards (null detaches); a host model ignores it.
  virtual void set_profiler(DitPhaseProfiler* profiler) const {}
  virtual bool on_device() const { return false; }
};

// Which expert denoises a step: Wan 2.2 A14B hands the steps with t < boundary · T_train to its
// second expert (which has its own guidance scale, generation.guidance_scale_2).
struct ExpertSchedule {
  std::optional<double> boundary_ratio;  // null: the first expert at every step
  int expert_at(double timestep, double num_train_timesteps) const {
    return boundary_ratio && timestep < *boundary_ratio * num_train_timesteps ? 1 : 0;
  }
};

// The video autoencoder of the ranks that decode (the replica's VAE group, which holds its leader;
// the family placed it and its parallel split at load).
class VideoAutoencoder {
 public:
  virtual ~VideoAutoencoder() = default;
  // latents [1, C, T, h, w] as the scheduler leaves them (the family denormalises) → video
  // [1, 3, F, H, W] in [-1, 1] on every rank of the group, where the VAE ran: host f32, or on the
  // device in f32 (its frames are converted there: ops/video_frames.h). Collective over the group.
  virtual Tensor decode(const Tensor& latents) const = 0;
  // video [1, 3, F, H, W] host f32 in [-1, 1], the same on every rank of the group → its latents as
  // the scheduler sees them [1, C, T, h, w] (the posterior's mode, normalised by the family), host
  // f32 on every rank of the group. Collective over the group, as decode. A family without an
  // encoder refuses it (kModel).
  virtual Tensor encode(const Tensor& video) const;
  // Finishes what the load started so that the first decode is fast (device plans, workspaces; a
  // split decoder warms up collectively over its group). Called once on every rank that holds an
  // autoencoder, after the device mesh exists (dist/device_mesh.h).
  virtual void finish_warm_up() {}
};

// A prompt line's still images as decoded (io/image_reader.h): CPU u8 [H, W, 3], or undefined.
struct JobImages {
  Tensor first, last;
  bool any() const { return first.defined(); }
};

// What a line's images become for the denoising loop (ImageConditioner), the same on every rank of
// the replica. Each part is optional; together they cover the image-to-video schemes of diffusers'
// pipelines (docs/images.md "Conditioning").
struct ImageCondition {
  // [n, L_img, D_img]: image tokens every expert attends to beside the text (Denoiser::prepare).
  Tensor image_tokens;
  // [1, C_x, T, h, w]: channels concatenated after the latents in every step's model input.
  Tensor extra_channels;
  // [1, C, k, h, w]: the first k latent frames are known: they replace the latents' in every step's
  // model input, their tokens run at timestep 0, and they replace the final latents' too.
  Tensor fixed_latents;
  bool any() const { return image_tokens.defined() || extra_channels.defined() || fixed_latents.defined(); }
};

// The image side of an image-conditioned family, on the replica leader: the pipeline calls
// image_tokens, condition_video, encodes that through the autoencoder, then finish.
class ImageConditioner {
 public:
  virtual ~ImageConditioner() = default;
  // The image tokens of the images (an image encoder such as CLIP), or undefined if the model
  // takes none.
  virtual Tensor image_tokens(const JobImages& images) const = 0;
  // The images preprocessed for the autoencoder [n, 3, H, W] in [-1, 1] (first, then last).
  virtual Tensor preprocess(const JobImages& images, int height, int width) const = 0;
  // The video the autoencoder encodes [1, 3, F_c, H, W] from `preprocess`'s images.
  virtual Tensor condition_video(const Tensor& preprocessed, int num_frames) const = 0;
  // The encoded condition video [1, C, T_c, h, w] (normalised) → the condition of latents
  // `latent_shape` [1, C, T, h, w]; image_tokens are filled by the pipeline.
  virtual ImageCondition finish(const Tensor& encoded, const Shape& latent_shape, bool has_last) const = 0;
};

// A family's model as loaded on this rank: each part only where this rank needs it.
struct LoadedModel {
  ModelTraits traits;
  std::unique_ptr<PromptEncoder> prompt_encoder;  // replica leader only
  std::vector<std::unique_ptr<Denoiser>> experts;  // every rank; the first is the high-noise one
  ExpertSchedule schedule;
  std::unique_ptr<VideoAutoencoder> autoencoder;  // ranks that decode
  std::unique_ptr<ImageConditioner> image_conditioner;  // image-conditioned models, replica leader only
  Json scheduler_config;                          // scheduler/scheduler_config.json
  LoadStats load_stats;                           // what loading cost this rank
};

}  // namespace vgen
