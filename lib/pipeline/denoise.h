// The denoising loop (docs/architecture.md "One denoising step") for already-encoded prompts, on one
// replica mesh, over the model seam's experts: CFG `uncond + s·(cond − uncond)` (on when
// guidance_scale > 1), the expert and guidance switch of the model's ExpertSchedule, CFG parallel
// (cfg rank 0 = conditional stream, one all-gather per step on mesh.cfg) and sequence parallel
// (shards per mesh.seq, all-gather of the output tokens). Every rank steps the scheduler identically.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "dist/mesh.h"
#include "config/fp8_config.h"
#include "model/first_block_cache.h"
#include "model/model.h"
#include "ops/fp8.h"
#include "parallel/local_attention.h"
#include "sched/scheduler.h"

namespace vgen {

struct DenoiseSettings {
  int num_inference_steps = 50;
  double guidance_scale = 5.0;
  std::optional<double> guidance_scale_2;  // second expert; defaults to guidance_scale
  // First-block cache (model/first_block_cache.h), one per stream and expert; 0: off.
  double first_block_threshold = 0.0;
  // precision fp8 (ops/fp8.h): the steps fp8_config.bf16_first_steps / bf16_last_steps name run
  // wholly in bf16 (StepPolicy::fp8 false); the others as the models' fp8 options say.
  // No effect on models without fp8.
  Fp8Config fp8;
  // The line's images as the model takes them (model.h ImageCondition; pipeline/image_condition.h
  // applies them to each step); null for text alone. Not owned.
  const ImageCondition* image = nullptr;
};

struct DenoiseModels {
  std::vector<const Denoiser*> experts;  // the high-noise expert first (or the only one)
  ExpertSchedule schedule;               // which expert runs which step
};

struct DenoiseStepInfo {
  int index = 0;        // 0-based
  int total = 0;
  double timestep = 0;  // as given to the model
  int expert = 0;       // index into DenoiseModels::experts
  double guidance = 1;  // scale used (1 when CFG is off)
  double seconds = 0;   // wall time of this step (model, gathers, scheduler)
  int cache_hits = 0;   // this rank's forwards of the step that the first-block cache cut short
};
// Called on every rank after each step with the new latents [B, C, T, H, W].
using DenoiseCallback = std::function<void(const DenoiseStepInfo&, const Tensor& latents)>;

struct DenoiseResult {
  Tensor latents;  // [B, C, T, H, W] f32 after the last step
  std::vector<DenoiseStepInfo> steps;
  double text_prepare_seconds = 0;  // text K/V of both streams and experts
  double seconds = 0;               // whole loop
  // First-block cache over both streams (summed over the CFG group): forwards that reached its
  // decision, and those whose later blocks it skipped. 0 / 0 when off.
  int64_t cache_forwards = 0, cache_hits = 0;
  std::vector<int64_t> cache_step_hits;  // per step, both streams (empty when off)
};

// prompt_embeds / negative_prompt_embeds [B, L, text_dim] (negative may be undefined when CFG is
// off); initial latents [B, C, T, H, W]. The scheduler is reset with set_timesteps. `attention`
// builds the SeqAttention of mesh.seq (e.g. make_seq_attention); null → local (seq size 1 only).
DenoiseResult denoise(const DenoiseModels& models, Scheduler& scheduler, const Tensor& prompt_embeds,
                      const Tensor& negative_prompt_embeds, const Tensor& initial_latents,
                      const DenoiseSettings& settings, Mesh& mesh, const SeqAttentionFactory& attention,
                      const DenoiseCallback& on_step = {});

}  // namespace vgen
