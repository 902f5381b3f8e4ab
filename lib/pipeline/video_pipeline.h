// Generation for one prompt on one replica mesh, over the model seam (model/model.h): the replica
// leader encodes the prompt and the negative prompt once and broadcasts the embeddings; every rank
// of the replica runs the sharded denoising loop; the ranks that decode run the autoencoder
// (split over the VAE group when parallel_vae_size > 1); the replica leader receives the frames for
// the writer (docs/architecture.md "Data flow").
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dist/mesh.h"
#include "io/recipe.h"
#include "io/report.h"
#include "model/model.h"
#include "pipeline/denoise.h"
#include "pipeline/text_cache.h"

namespace vgen {

struct VideoJob {
  int index = 0;
  std::string prompt;
  std::string negative_prompt;
  int64_t seed = 0;
  int num_frames = 81;  // already 1 + k·scale_temporal
  int height = 480, width = 832;
  Tensor initial_latents;  // optional: use these instead of generation.initial_latents / the seed
  // The line's still images (files the preflight checked; read by the replica leader): the first
  // frame, and the last one for first-and-last-frame models. Empty: text to video.
  std::string image, last_image;
};

struct VideoOutput {
  Tensor frames;   // u8 [F, H, W, 3] on the replica leader; undefined elsewhere
  Tensor video;    // f32 [1, 3, F, H, W] in [-1, 1] on the replica leader (for save_tensors / goldens)
  Tensor latents;  // f32 [1, C, T, h, w] after the last step (every rank)
  // The condition images as the autoencoder took them [n, 3, H, W] in [-1, 1] (replica leader,
  // image lines; for goldens).
  Tensor condition_images;
  std::vector<double> step_timesteps;
  VideoSeconds seconds;
  int64_t cache_forwards = 0, cache_hits = 0;  // first-block cache (DenoiseResult)
  std::vector<int64_t> cache_step_hits;
};

// Per-step hook: (job, step info, latents after the step) on every rank of the replica.
using VideoStepHook = std::function<void(const VideoJob&, const DenoiseStepInfo&, const Tensor&)>;

class VideoPipeline {
 public:
  // Loads what this rank needs through the checkpoint's family (model/registry.h). Collective
  // over the world.
  VideoPipeline(const Recipe& recipe, Mesh& mesh);

  // Collective over the replica. Throws vgen::Error with kInput for per-prompt failures that every
  // rank of the replica sees alike (bad settings, text encoding failure on the leader, NaN/Inf in
  // the latents); any other error is fatal for the job.
  VideoOutput render(const VideoJob& job, const VideoStepHook& hook = {});

  const Recipe& recipe() const { return recipe_; }
  const ModelTraits& traits() const { return model_.traits; }
  int native_fps() const { return model_.traits.native_fps; }
  // What loading cost this rank (dist/weight_stream.h): bytes read, received, per component.
  const LoadStats& load_stats() const { return model_.load_stats; }
  // This rank's execution paths (pipeline/execution_paths.h; null with device: cpu), for timing.json.
  const Json& execution_paths() const { return execution_paths_; }

 private:
  Tensor encode_text(const VideoJob& job, bool need_negative);  // [2 or 1, L, D] on every rank
  // The line's images → the model's condition, on every rank of the replica (collective).
  ImageCondition condition_on_images(const VideoJob& job, VideoOutput& out);
  DenoiseResult denoise_job(const VideoJob& job, const Tensor& embeds, bool do_cfg, const ImageCondition& image,
                            VideoOutput& out, const VideoStepHook& hook);
  void decode(const Tensor& latents, VideoOutput& out);

  const Recipe& recipe_;
  Mesh& mesh_;
  LoadedModel model_;
  std::unique_ptr<TextCache> text_cache_;
  std::shared_ptr<Mesh> dmesh_;  // device: cuda — the mesh with NCCL sequence groups
  Json execution_paths_;
};

}  // namespace vgen
