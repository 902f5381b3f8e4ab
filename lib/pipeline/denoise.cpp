#include "pipeline/denoise.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "core/device_fault.h"
#include "core/log.h"
#include "core/on_unwind.h"
#include "core/timer.h"
#include "core/wait_marker.h"
#include "ops/elementwise.h"
#include "ops/fp8.h"
#include "model/dit_step.h"
#include "model/phase_profiler.h"

namespace vgen {
namespace {


// VGEN_PROFILE_STEPS=1: every forward brackets its ops with CUDA events (slightly slower) and each
// step's time is logged split into the GPU phases of its forwards and the rest of the step.
bool profile_steps() {
  const char* e = std::getenv("VGEN_PROFILE_STEPS");
  return e && *e && std::string(e) != "0";
}

}  // namespace

DenoiseResult denoise(const DenoiseModels& models, Scheduler& scheduler, const Tensor& prompt_embeds,
                      const Tensor& negative_prompt_embeds, const Tensor& initial_latents,
                      const DenoiseSettings& settings, Mesh& mesh, const SeqAttentionFactory& attention_factory,
                      const DenoiseCallback& on_step) {
  Timer total;
  VGEN_CHECK(!models.experts.empty() && models.experts[0] != nullptr, ExitCode::kModel, "denoise: no expert");
  const bool do_cfg = settings.guidance_scale > 1.0;
  const int cfg_size = mesh.shape.cfg;
  VGEN_CHECK(cfg_size == 1 || cfg_size == 2, ExitCode::kRecipe, "parallel_config.cfg_size must be 1 or 2, got {}",
             cfg_size);
  const bool cfg_parallel = do_cfg && cfg_size == 2;
  if (cfg_parallel)
    VGEN_ASSERT(mesh.cfg && mesh.cfg->size() == 2 && mesh.cfg->rank() == mesh.coord.cfg,
                "mesh cfg group does not match cfg coordinate {}", mesh.coord.cfg);
  VGEN_ASSERT(mesh.seq && mesh.seq->size() == mesh.shape.seq() && mesh.seq->rank() == mesh.seq_rank(),
              "mesh seq group does not match the mesh shape (seq {} rank {})", mesh.shape.seq(), mesh.seq_rank());
  if (do_cfg)
    VGEN_CHECK(negative_prompt_embeds.defined() && negative_prompt_embeds.shape() == prompt_embeds.shape(),
               ExitCode::kInput, "classifier-free guidance needs negative prompt embeddings of shape {}",
               prompt_embeds.str());
  const ExpertSchedule& schedule = models.schedule;
  const bool two_experts = schedule.boundary_ratio.has_value();
  if (two_experts)
    VGEN_CHECK(models.experts.size() >= 2 && models.experts[1] != nullptr, ExitCode::kModel,
               "boundary_ratio {} is set but the model has no second expert", *schedule.boundary_ratio);
  VGEN_CHECK(initial_latents.ndim() == 5 && initial_latents.dim(0) == prompt_embeds.dim(0), ExitCode::kInput,
             "initial latents {} do not match the prompt batch {}", initial_latents.str(), prompt_embeds.str());
  VGEN_CHECK(models.experts[0]->out_channels() == initial_latents.dim(1), ExitCode::kModel,
             "the denoiser predicts {} channels for latents {}", models.experts[0]->out_channels(),
             initial_latents.str());

  std::unique_ptr<SeqAttention> attention = attention_factory ? attention_factory(mesh) : make_local_attention();
  VGEN_CHECK(attention != nullptr, ExitCode::kInternal, "the SeqAttention factory returned nothing");

  scheduler.set_timesteps(settings.num_inference_steps);
  const std::vector<double>& timesteps = scheduler.timesteps();

  // This rank's streams: with CFG parallel only its own (cfg rank 0 conditional); else the
  // conditional one, and the unconditional one when CFG is on.
  const bool run_uncond = do_cfg && (!cfg_parallel || mesh.coord.cfg == 1);
  // Conditioning per expert and stream, prepared on first use and reused by every step.
  std::unique_ptr<Conditioning> conds[2][2];  // [expert][0 cond, 1 uncond]
  DenoiseResult res;
  auto context = [&](int expert, int stream) -> const Conditioning& {
    std::unique_ptr<Conditioning>& c = conds[expert][stream];
    if (!c) {
      Timer t;
      c = models.experts[size_t(expert)]->prepare(stream ? negative_prompt_embeds : prompt_embeds);
      res.text_prepare_seconds += t.seconds();
    }
    return *c;
  };

  // A fresh cache per stream and expert: each compares only with its own earlier steps.
  FirstBlockCache caches[2][2] = {{FirstBlockCache(settings.first_block_threshold),
                                   FirstBlockCache(settings.first_block_threshold)},
                                  {FirstBlockCache(settings.first_block_threshold),
                                   FirstBlockCache(settings.first_block_threshold)}};
  auto cache = [&](int expert, int stream) -> FirstBlockCache* {
    return caches[expert][stream].enabled() ? &caches[expert][stream] : nullptr;
  };
  auto hits = [&] {
    int64_t n = 0;
    for (auto& e : caches)
      for (auto& c : e) n += c.hits();
    return n;
  };

  const bool profile = profile_steps();
  Tensor latents = initial_latents.dtype() == DType::kF32 ? initial_latents.clone() : initial_latents.to(DType::kF32);
  const int64_t B = latents.dim(0);
  for (int i = 0; i < int(timesteps.size()); ++i) {
    wait_marker_step(i + 1, int(timesteps.size()));  // published for the watchdog (dist/watchdog.h)
    const DeviceAllocPhase phase(fmt::format("denoising step {}/{}", i + 1, timesteps.size()));
    device_fault_inject("step", i + 1);  // test hooks VGEN_INJECT_OOM / VGEN_INJECT_CUDA_FAULT
    Timer step_timer;
    const int64_t hits_before = hits();
    const double t = timesteps[size_t(i)];
    const int expert = schedule.expert_at(t, scheduler.num_train_timesteps());
    if (expert == 1)  // timesteps fall: the high-noise expert's caches are not used again
      for (auto& c : caches[0]) c.release();
    const Denoiser& model = *models.experts[size_t(expert)];
    const double g = expert ? settings.guidance_scale_2.value_or(settings.guidance_scale) : settings.guidance_scale;
    Tensor tvec = Tensor::from_vector(std::vector<float>(size_t(B), float(t)), {B});  // [B]
    const StepPolicy step{settings.fp8.step_in_fp8(i, int(timesteps.size()))};  // the step's precision

    const Denoiser* dm = profile && model.on_device() ? &model : nullptr;
    std::optional<DitPhaseProfiler> prof;  // CUDA events: made only for a device model
    if (dm) dm->set_profiler(&prof.emplace());
    OnUnwind detach([dm] {  // a failed step (the batch goes on) must not leave a dangling profiler
      if (dm) dm->set_profiler(nullptr);
    });
    Timer predict_timer;
    Tensor v;  // [B, C, T, H, W] flow prediction after guidance
    if (cfg_parallel) {
      const int stream = mesh.coord.cfg;  // 0 cond, 1 uncond
      Tensor mine =
          dit_predict(model, latents, tvec, context(expert, stream), *mesh.seq, *attention, cache(expert, stream), step);
      Shape both = mine.shape();
      both.insert(both.begin(), 2);
      Tensor gathered = Tensor::empty(both, DType::kF32);  // [2, B, C, T, H, W]: cond, uncond
      mesh.cfg->all_gather(mine, gathered);
      v = cfg_combine(gathered[0], gathered[1], float(g));
    } else {
      Tensor cond = dit_predict(model, latents, tvec, context(expert, 0), *mesh.seq, *attention, cache(expert, 0), step);
      if (run_uncond) {
        Tensor uncond =
            dit_predict(model, latents, tvec, context(expert, 1), *mesh.seq, *attention, cache(expert, 1), step);
        v = cfg_combine(cond, uncond, float(g));
      } else {
        v = cond;
      }
    }
    if (dm) dm->set_profiler(nullptr);  // the normal path; `detach` covers a throw above
    const double predict_s = predict_timer.seconds();  // the forwards end in a copy to the host
    Timer sched_timer;
    latents = scheduler.step(v, latents);
    if (profile) {
      double gpu = 0;
      std::string phases;
      for (int p = 0; prof && p < DitPhaseProfiler::kCount; ++p) {
        const auto ph = DitPhaseProfiler::Phase(p);
        gpu += prof->seconds(ph);
        phases += fmt::format("{}{} {:.3f}", p ? ", " : "", DitPhaseProfiler::name(ph), prof->seconds(ph));
      }
      log_info("step {}/{}: {:.3f} s = forwards {:.3f} s (GPU ops {:.3f} s: {}; the rest {:.3f} s) + scheduler {:.3f} s",
               i + 1, int(timesteps.size()), step_timer.seconds(), predict_s, gpu, dm ? phases : "no device model",
               predict_s - gpu, sched_timer.seconds());
    }

    DenoiseStepInfo info;
    info.index = i;
    info.total = int(timesteps.size());
    info.timestep = t;
    info.expert = expert;
    info.guidance = do_cfg ? g : 1.0;
    info.seconds = step_timer.seconds();
    info.cache_hits = int(hits() - hits_before);
    res.steps.push_back(info);
    log_debug("step {}/{} t={} expert {} {:.3f}s", i + 1, info.total, t, expert, info.seconds);
    if (on_step) on_step(info, latents);
  }
  wait_marker_step(0, 0);
  if (settings.first_block_threshold > 0) {
    for (auto& e : caches)
      for (auto& c : e) res.cache_forwards += c.forwards();
    for (const DenoiseStepInfo& s : res.steps) res.cache_step_hits.push_back(s.cache_hits);
    if (cfg_parallel) {  // each CFG rank ran one stream: count both
      std::vector<float> n = {float(res.cache_forwards)};
      for (int64_t h : res.cache_step_hits) n.push_back(float(h));
      Tensor t = Tensor::from_vector(n, {int64_t(n.size())});
      mesh.cfg->all_reduce_sum(t);
      res.cache_forwards = int64_t(t.f32()[0]);
      for (size_t i = 0; i < res.cache_step_hits.size(); ++i) res.cache_step_hits[i] = int64_t(t.f32()[1 + i]);
    }
    for (int64_t h : res.cache_step_hits) res.cache_hits += h;
    log_info("first-block cache: {} of {} forwards skipped their later blocks (threshold {})", res.cache_hits,
             res.cache_forwards, settings.first_block_threshold);
  }
  res.latents = latents;
  res.seconds = total.seconds();
  return res;
}

}  // namespace vgen
