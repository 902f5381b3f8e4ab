#include "pipeline/video_pipeline.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/device_fault.h"
#include "core/timer.h"
#include "dist/bootstrap.h"
#include "dist/device_mesh.h"
#include "model/latents.h"
#include "model/registry.h"
#include "ops/video_frames.h"
#include "parallel/seq_attention_factory.h"
#include "pipeline/execution_paths.h"
#include "pipeline/precision.h"
#include "sched/scheduler.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

bool all_finite(const Tensor& t) {
  const float* p = t.f32();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

// Test hook: VGEN_INJECT_NAN_PROMPT=<index> poisons that prompt's latents after its first step, to
// exercise failure isolation end to end (documented in the README).
bool inject_nan_for(int index) {
  const char* e = std::getenv("VGEN_INJECT_NAN_PROMPT");
  return e && *e && std::atoi(e) == index;
}

}  // namespace

VideoPipeline::VideoPipeline(const Recipe& recipe, Mesh& mesh) : recipe_(recipe), mesh_(mesh) {
  // device: cuda — select this rank's GPU first (collective on its first call, so every rank calls
  // it here) so that every weight lands on it.
  if (recipe.is_cuda()) select_mesh_device();
  execution_paths_ = start_execution_paths(recipe, *mesh.world);  // collective: refuses a GPU without code
  refuse_fp8_without_device(recipe, *mesh.world);  // precision fp8: collective, before any weight
  model_ = model_family(DiffusersDir(recipe.model)).load(recipe, mesh);
  if (recipe.is_cuda()) dmesh_ = device_mesh(mesh);  // collective: every rank builds it here
  if (model_.autoencoder) model_.autoencoder->finish_warm_up();
  if (mesh.is_replica_leader() && recipe.text.cache_embeddings) {
    std::string cdir = recipe.text.cache_dir.empty() ? (fs::path(recipe.output.dir) / ".text_cache").string()
                                                     : recipe.text.cache_dir;
    text_cache_ = std::make_unique<TextCache>(cdir, model_.prompt_encoder->identity());
  }
}

Tensor VideoPipeline::encode_text(const VideoJob& job, bool need_negative) {
  const int L = recipe_.generation.max_sequence_length;
  const int64_t n = need_negative ? 2 : 1;
  Tensor embeds = Tensor::empty({n, L, model_.traits.prompt_dim}, DType::kF32);  // [n, L, D]
  bool failed = false;
  std::string error;
  if (mesh_.is_replica_leader()) {
    const DeviceAllocPhase phase("encoding the prompt text");  // named in OOM messages
    try {
      std::vector<std::string> prompts = {job.prompt};
      PromptContext ctx{job.num_frames, job.height, job.width, double(recipe_.output.fps.value_or(native_fps()))};
      std::vector<PromptContext> contexts = {ctx};
      if (need_negative) {
        prompts.push_back(job.negative_prompt);
        ctx.negative = true;
        contexts.push_back(ctx);
      }
      Tensor e = encode_prompts_cached(*model_.prompt_encoder, text_cache_.get(), prompts, L, contexts);  // [n, L, D]
      VGEN_CHECK(e.shape() == embeds.shape(), ExitCode::kInput, "text encoder returned {} (expected {})", e.str(),
                 shape_str(embeds.shape()));
      embeds.copy_from(e);
    } catch (const Error& e) {
      // A device fault is not the prompt's: it ends the job (the error's handler aborts every rank).
      if (e.code() == ExitCode::kDeviceOutOfMemory || e.code() == ExitCode::kDistributed) throw;
      failed = true;
      error = e.message();
    }
  }
  // Agree before the broadcast so a failure on the leader never leaves the others waiting.
  if (any_rank_failed(*mesh_.replica, failed))
    VGEN_THROW(ExitCode::kInput, "text encoding failed{}", error.empty() ? " on the replica leader" : ": " + error);
  mesh_.replica->broadcast(embeds, 0);
  return embeds;
}

DenoiseResult VideoPipeline::denoise_job(const VideoJob& job, const Tensor& embeds, bool do_cfg,
                                         const ImageCondition& image, VideoOutput& out, const VideoStepHook& hook) {
  const GenerationConfig& g = recipe_.generation;
  Tensor cond = embeds.narrow(0, 1).clone();
  Tensor uncond = do_cfg ? embeds.narrow(1, 1).clone() : Tensor();
  const Shape shape = model_.traits.latent_shape(1, job.num_frames, job.height, job.width);
  Tensor init = job.initial_latents.defined() ? job.initial_latents
                                             : make_initial_latents(shape, g.initial_latents, uint64_t(job.seed));
  VGEN_CHECK(init.shape() == shape, ExitCode::kInput, "initial latents {} do not match the latent shape {}", init.str(),
             shape_str(shape));

  SchedulerOverrides ov;
  ov.kind = g.scheduler;
  ov.flow_shift = g.flow_shift;
  std::unique_ptr<Scheduler> sched = make_scheduler(model_.scheduler_config, ov);
  // bf16 latents between steps as the bf16 path (precision fp8 on the GPU: bf16 outside the fp8 ops).
  sched->round_bf16 = recipe_.is_bf16() || (recipe_.is_quantised() && recipe_.is_cuda());
  sched->noise_seed = uint64_t(job.seed);  // a stochastic scheduler's per-step noise

  DenoiseSettings ds;
  ds.num_inference_steps = g.num_inference_steps;
  ds.guidance_scale = g.guidance_scale;
  ds.guidance_scale_2 = g.guidance_scale_2;
  ds.first_block_threshold = recipe_.cache.first_block_threshold;
  ds.fp8 = recipe_.fp8;
  ds.image = image.any() ? &image : nullptr;
  DenoiseModels models;
  for (const auto& e : model_.experts) models.experts.push_back(e.get());
  models.schedule = model_.schedule;
  const AttentionConfig attn_cfg = recipe_.attention;
  SeqAttentionFactory factory = [attn_cfg](Mesh& m) { return make_seq_attention(m, attn_cfg); };
  const bool poison = inject_nan_for(job.index);
  DenoiseCallback on_step = [&](const DenoiseStepInfo& info, const Tensor& latents) {
    if (poison && info.index == 0) const_cast<float*>(latents.f32())[0] = NAN;
    // Every rank holds the same latents (identical scheduler steps), so all detect it together.
    VGEN_CHECK(all_finite(latents), ExitCode::kInput, "NaN or Inf in the latents after step {} of {}",
               info.index + 1, info.total);
    out.seconds.steps.push_back(info.seconds);
    if (hook) hook(job, info, latents);
  };
  return denoise(models, *sched, cond, uncond, init, ds, dmesh_ ? *dmesh_ : mesh_, factory, on_step);
}

void VideoPipeline::decode(const Tensor& latents, VideoOutput& out) {
  if (!model_.autoencoder) return;  // this rank does not decode
  const DeviceAllocPhase phase("decoding the video (VAE)");  // named in OOM messages
  Tensor video = model_.autoencoder->decode(latents);       // [1, 3, F, H, W] on the VAE's device
  if (mesh_.is_replica_leader()) {
    out.frames = video_to_u8_frames(video);  // [F, H, W, 3] host u8 (converted where the video is)
    out.video = std::move(video);
  }
}

VideoOutput VideoPipeline::render(const VideoJob& job, const VideoStepHook& hook) {
  Timer total;
  VideoOutput out;
  const bool do_cfg = recipe_.generation.guidance_scale > 1.0;

  Timer t_text;
  Tensor embeds = encode_text(job, do_cfg);  // [1|2, L, D]
  out.seconds.text_encode = t_text.seconds();

  const ImageCondition image = job.image.empty() ? ImageCondition() : condition_on_images(job, out);
  DenoiseResult dr = denoise_job(job, embeds, do_cfg, image, out, hook);
  out.latents = dr.latents;
  out.seconds.denoise = dr.seconds;
  for (auto& s : dr.steps) out.step_timesteps.push_back(s.timestep);
  out.cache_forwards = dr.cache_forwards, out.cache_hits = dr.cache_hits;
  out.cache_step_hits = dr.cache_step_hits;

  Timer t_vae;
  decode(dr.latents, out);
  out.seconds.vae_decode = t_vae.seconds();
  out.seconds.total = total.seconds();
  return out;
}

}  // namespace vgen
