// Text-to-video for one prompt on one replica mesh (DESIGN.md): the replica leader encodes the
// prompt and the negative prompt once and broadcasts the embeddings; every rank of the replica
// runs the sharded denoising loop; the VAE group decodes (parallel when parallel_vae_size > 1);
// the replica leader receives the frames for the writer.
#pragma once
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "core/tensor.h"
#include "dist/mesh.h"
#include "dist/weight_stream.h"
#include "io/diffusers_dir.h"
#include "io/recipe.h"
#include "io/report.h"
#include "model/wan/text_encoder.h"
#include "model/wan/transformer.h"
#include "model/wan/vae_decoder.h"
#include "model/wan/vae_device.h"
#include "pipeline/denoise.h"
#include "pipeline/latents.h"
#include "pipeline/text_cache.h"

namespace vgen {

struct T2vJob {
  int index = 0;
  std::string prompt;
  std::string negative_prompt;
  int64_t seed = 0;
  int num_frames = 81;  // already 4k+1
  int height = 480, width = 832;
  Tensor initial_latents;  // optional: use these instead of generation.initial_latents / the seed
};

struct T2vOutput {
  Tensor frames;   // u8 [F, H, W, 3] on the replica leader; undefined elsewhere
  Tensor video;    // f32 [1, 3, F, H, W] in [-1, 1] on the replica leader (for save_tensors / goldens)
  Tensor latents;  // f32 [1, C, T, h, w] after the last step (every rank)
  std::vector<double> step_timesteps;
  VideoSeconds seconds;
  int64_t cache_forwards = 0, cache_hits = 0;  // first-block cache (DenoiseResult)
  std::vector<int64_t> cache_step_hits;
};

// Per-step hook: (job, step info, latents after the step) on every rank of the replica.
using T2vStepHook = std::function<void(const T2vJob&, const DenoiseStepInfo&, const Tensor&)>;

// precision fp8 (docs/fp8.md). The DiT options of the recipe's fp8_config (device: the bf16 weights
// are kept only when some step runs in bf16; host: always).
WanFp8Options wan_fp8_options(const Recipe& recipe);
// With device cuda and precision fp8, every rank of `world` checks that its current GPU has FP8
// tensor cores this build drives (ops/fp8.h cuda_fp8_available) — collectively, so that every rank
// throws the same kRecipe error (exit 3) naming precision, the first such rank and its GPU's name
// and compute capability, before any weight is loaded. Never a fallback to bf16. Nothing otherwise.
void refuse_fp8_without_device(const Recipe& recipe, Communicator& world);
// What timing.json reports of the precision: {"precision", "compute", "self_attention", "gemm",
// "cross_attention", "bf16_steps": [...]} (fp8_config resolved for generation.num_inference_steps).
Json precision_report(const Recipe& recipe);

class T2vPipeline {
 public:
  // Loads what this rank needs: the text encoder on the replica leader, the transformer(s) on every
  // rank, the VAE decoder on the VAE group. Collective over nothing; cheap ranks skip components.
  T2vPipeline(const Recipe& recipe, Mesh& mesh);
  ~T2vPipeline();

  // Collective over the replica. Throws vgen::Error with kInput for per-prompt failures that every
  // rank of the replica sees alike (bad settings, text encoding failure on the leader, NaN/Inf in
  // the latents); any other error is fatal for the job.
  T2vOutput render(const T2vJob& job, const T2vStepHook& hook = {});

  const Recipe& recipe() const { return recipe_; }
  int native_fps() const { return native_fps_; }
  int64_t latent_channels() const;
  // What loading cost this rank (dist/weight_stream.h): bytes read, received, per component.
  const LoadStats& load_stats() const { return load_stats_; }

 private:
  Tensor encode_text(const T2vJob& job, bool need_negative);  // [2 or 1, L, D] on every rank
  // device: cuda — one decode by `dec` of two latent frames at the recipe's size (collective over
  // the VAE group when vae_comm is given). VGEN_VAE_WARMUP=0 turns it off.
  void warm_up_vae(const WanVaeDeviceDecoder& dec, Communicator* vae_comm);
  static bool vae_warmup_enabled();

  const Recipe& recipe_;
  Mesh& mesh_;
  DiffusersDir dir_;
  std::unique_ptr<TextEncoder> text_;
  std::unique_ptr<TextCache> text_cache_;
  int64_t text_hidden_ = 0;
  std::unique_ptr<WanTransformer> transformer_, transformer_2_;
  std::unique_ptr<WanVaeDecoder> vae_;
  // device: cuda — the mesh with NCCL sequence groups, the device VAE and its NCCL group.
  std::shared_ptr<Mesh> dmesh_;
  std::shared_ptr<WanVaeDeviceDecoder> dvae_;
  std::shared_ptr<Communicator> dvae_comm_;
  Json scheduler_config_;
  LatentStats latent_stats_;
  std::optional<double> boundary_ratio_;
  int scale_spatial_ = 8, scale_temporal_ = 4;
  int native_fps_ = 16;
  LoadStats load_stats_;
  std::thread warm_thread_;  // the VAE warm-up beside the load (parallel_vae_size 1)
  std::exception_ptr warm_error_;
};

}  // namespace vgen
