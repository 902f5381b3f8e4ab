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
#include "pipeline/image_condition.h"

namespace vgen {
namespace {


// VGEN_PROFILE_STEPS=1: every forward brackets its ops with CUDA events (slightly slower) and each
// step's time is logged split into the GPU phases of its forwards and the rest of the step.
bool profile_steps() {
  const char* e = std::getenv("VGEN_PROFILE_STEPS");
  return e && *e && std::string(e) != "0";
}

// The denoising loop of one prompt: its inputs, this rank's streams, the conditioning and
// first-block caches per expert and stream, and the result so far.
class DenoiseLoop {
 public:
  DenoiseLoop(const DenoiseModels& models, Scheduler& scheduler, const Tensor& prompt_embeds,
              const Tensor& negative_prompt_embeds, const DenoiseSettings& settings, Mesh& mesh)
      : models_(models), scheduler_(scheduler), prompt_(prompt_embeds), negative_(negative_prompt_embeds),
        settings_(settings), mesh_(mesh), do_cfg_(settings.guidance_scale > 1.0),
        cfg_parallel_(do_cfg_ && mesh.shape.cfg == 2), profile_(profile_steps()),
        caches_{{FirstBlockCache(settings.first_block_threshold), FirstBlockCache(settings.first_block_threshold)},
                {FirstBlockCache(settings.first_block_threshold), FirstBlockCache(settings.first_block_threshold)}} {}

  void check(const Tensor& initial_latents) const;
  // One step from `latents` at step index i (of the scheduler's timesteps) → the next latents.
  Tensor step(int i, const Tensor& latents, SeqAttention& attention);
  // The first-block cache's counts over both streams (summed over the CFG group).
  void count_cache_hits();
  DenoiseResult& result() { return res_; }

 private:
  const Conditioning& context(int expert, int stream);
  FirstBlockCache* cache(int expert, int stream) {
    return caches_[expert][stream].enabled() ? &caches_[expert][stream] : nullptr;
  }
  int64_t hits() const {
    int64_t n = 0;
    for (auto& e : caches_)
      for (auto& c : e) n += c.hits();
    return n;
  }
  // The flow prediction after guidance [B, C, T, H, W] of this rank's streams.
  Tensor predict(const Denoiser& model, int expert, double g, const Tensor& latents, const Tensor& tvec,
                 const StepPolicy& step, SeqAttention& attention);

  const DenoiseModels& models_;
  Scheduler& scheduler_;
  const Tensor& prompt_;
  const Tensor& negative_;
  const DenoiseSettings& settings_;
  Mesh& mesh_;
  const bool do_cfg_, cfg_parallel_;
  const bool profile_;  // VGEN_PROFILE_STEPS, read once per loop
  // Conditioning per expert and stream, prepared on first use and reused by every step.
  std::unique_ptr<Conditioning> conds_[2][2];  // [expert][0 cond, 1 uncond]
  // A fresh cache per stream and expert: each compares only with its own earlier steps.
  FirstBlockCache caches_[2][2];
  DenoiseResult res_;
};

void DenoiseLoop::check(const Tensor& initial_latents) const {
  VGEN_CHECK(!models_.experts.empty() && models_.experts[0] != nullptr, ExitCode::kModel, "denoise: no expert");
  const int cfg_size = mesh_.shape.cfg;
  VGEN_CHECK(cfg_size == 1 || cfg_size == 2, ExitCode::kRecipe, "parallel_config.cfg_size must be 1 or 2, got {}",
             cfg_size);
  if (cfg_parallel_)
    VGEN_ASSERT(mesh_.cfg && mesh_.cfg->size() == 2 && mesh_.cfg->rank() == mesh_.coord.cfg,
                "mesh cfg group does not match cfg coordinate {}", mesh_.coord.cfg);
  VGEN_ASSERT(mesh_.seq && mesh_.seq->size() == mesh_.shape.seq() && mesh_.seq->rank() == mesh_.seq_rank(),
              "mesh seq group does not match the mesh shape (seq {} rank {})", mesh_.shape.seq(), mesh_.seq_rank());
  if (do_cfg_)
    VGEN_CHECK(negative_.defined() && negative_.shape() == prompt_.shape(), ExitCode::kInput,
               "classifier-free guidance needs negative prompt embeddings of shape {}", prompt_.str());
  const ExpertSchedule& schedule = models_.schedule;
  if (schedule.boundary_ratio.has_value())
    VGEN_CHECK(models_.experts.size() >= 2 && models_.experts[1] != nullptr, ExitCode::kModel,
               "boundary_ratio {} is set but the model has no second expert", *schedule.boundary_ratio);
  VGEN_CHECK(initial_latents.ndim() == 5 && initial_latents.dim(0) == prompt_.dim(0), ExitCode::kInput,
             "initial latents {} do not match the prompt batch {}", initial_latents.str(), prompt_.str());
  VGEN_CHECK(models_.experts[0]->out_channels() == initial_latents.dim(1), ExitCode::kModel,
             "the denoiser predicts {} channels for latents {}", models_.experts[0]->out_channels(),
             initial_latents.str());
}

const Conditioning& DenoiseLoop::context(int expert, int stream) {
  std::unique_ptr<Conditioning>& c = conds_[expert][stream];
  if (!c) {
    Timer t;
    const Tensor image_tokens = settings_.image ? settings_.image->image_tokens : Tensor();
    c = models_.experts[size_t(expert)]->prepare(stream ? negative_ : prompt_, image_tokens);
    res_.text_prepare_seconds += t.seconds();
  }
  return *c;
}

Tensor DenoiseLoop::predict(const Denoiser& model, int expert, double g, const Tensor& latents, const Tensor& tvec,
                            const StepPolicy& step, SeqAttention& attention) {
  if (cfg_parallel_) {
    const int stream = mesh_.coord.cfg;  // 0 cond, 1 uncond
    Tensor mine = dit_predict(model, latents, tvec, context(expert, stream), *mesh_.seq, attention,
                              cache(expert, stream), step);
    Shape both = mine.shape();
    both.insert(both.begin(), 2);
    Tensor gathered = Tensor::empty(both, DType::kF32);  // [2, B, C, T, H, W]: cond, uncond
    mesh_.cfg->all_gather(mine, gathered);
    return cfg_combine(gathered[0], gathered[1], float(g));
  }
  // This rank's streams: the conditional one, and the unconditional one when CFG is on.
  Tensor cond = dit_predict(model, latents, tvec, context(expert, 0), *mesh_.seq, attention, cache(expert, 0), step);
  if (!do_cfg_) return cond;
  Tensor uncond = dit_predict(model, latents, tvec, context(expert, 1), *mesh_.seq, attention, cache(expert, 1), step);
  return cfg_combine(cond, uncond, float(g));
}

// VGEN_PROFILE_STEPS=1: the step's time split into the GPU phases of its forwards and the rest.
void log_step_profile(int i, int n, double step_s, double predict_s, double sched_s, DitPhaseProfiler* prof) {
  double gpu = 0;
  std::string phases;
  for (int p = 0; prof && p < DitPhaseProfiler::kCount; ++p) {
    const auto ph = DitPhaseProfiler::Phase(p);
    gpu += prof->seconds(ph);
    phases += fmt::format("{}{} {:.3f}", p ? ", " : "", DitPhaseProfiler::name(ph), prof->seconds(ph));
  }
  log_info("step {}/{}: {:.3f} s = forwards {:.3f} s (GPU ops {:.3f} s: {}; the rest {:.3f} s) + scheduler {:.3f} s",
           i + 1, n, step_s, predict_s, gpu, prof ? phases : "no device model", predict_s - gpu, sched_s);
}

Tensor DenoiseLoop::step(int i, const Tensor& latents, SeqAttention& attention) {
  const std::vector<double>& timesteps = scheduler_.timesteps();
  const int n = int(timesteps.size());
  wait_marker_step(i + 1, n);  // published for the watchdog (dist/watchdog.h)
  const DeviceAllocPhase phase(fmt::format("denoising step {}/{}", i + 1, n));
  device_fault_inject("step", i + 1);  // test hooks VGEN_INJECT_OOM / VGEN_INJECT_CUDA_FAULT
  Timer step_timer;
  const int64_t hits_before = hits();
  const double t = timesteps[size_t(i)];
  const int expert = models_.schedule.expert_at(t, scheduler_.num_train_timesteps());
  if (expert == 1)  // timesteps fall: the high-noise expert's caches are not used again
    for (auto& c : caches_[0]) c.release();
  const Denoiser& model = *models_.experts[size_t(expert)];
  const double g = expert ? settings_.guidance_scale_2.value_or(settings_.guidance_scale) : settings_.guidance_scale;
  const int64_t B = latents.dim(0);
  const ImageCondition none;
  const ImageCondition& image = settings_.image ? *settings_.image : none;
  const Tensor input = condition_model_input(latents, image);  // [B, C (+ C_x), T, h, w]
  Tensor tvec = condition_token_timesteps(image, t, B, model.num_tokens(input.shape()), latents.dim(2));  // [B, S]
  if (!tvec.defined()) tvec = Tensor::from_vector(std::vector<float>(size_t(B), float(t)), {B});  // [B]
  const StepPolicy policy{settings_.fp8.step_in_fp8(i, n)};                       // the step's precision

  const Denoiser* dm = profile_ && model.on_device() ? &model : nullptr;
  std::optional<DitPhaseProfiler> prof;  // CUDA events: made only for a device model
  if (dm) dm->set_profiler(&prof.emplace());
  OnUnwind detach([dm] {  // a failed step (the batch goes on) must not leave a dangling profiler
    if (dm) dm->set_profiler(nullptr);
  });
  Timer predict_timer;
  Tensor v = predict(model, expert, g, input, tvec, policy, attention);  // [B, C, T, H, W] after guidance
  if (dm) dm->set_profiler(nullptr);  // the normal path; `detach` covers a throw above
  const double predict_s = predict_timer.seconds();  // the forwards end in a copy to the host
  Timer sched_timer;
  Tensor next = scheduler_.step(v, latents);
  if (profile_)
    log_step_profile(i, n, step_timer.seconds(), predict_s, sched_timer.seconds(), prof ? &*prof : nullptr);

  DenoiseStepInfo info;
  info.index = i;
  info.total = n;
  info.timestep = t;
  info.expert = expert;
  info.guidance = do_cfg_ ? g : 1.0;
  info.seconds = step_timer.seconds();
  info.cache_hits = int(hits() - hits_before);
  res_.steps.push_back(info);
  log_debug("step {}/{} t={} expert {} {:.3f}s", i + 1, info.total, t, expert, info.seconds);
  return next;
}

void DenoiseLoop::count_cache_hits() {
  if (settings_.first_block_threshold <= 0) return;
  for (auto& e : caches_)
    for (auto& c : e) res_.cache_forwards += c.forwards();
  for (const DenoiseStepInfo& s : res_.steps) res_.cache_step_hits.push_back(s.cache_hits);
  if (cfg_parallel_) {  // each CFG rank ran one stream: count both
    std::vector<float> n = {float(res_.cache_forwards)};
    for (int64_t h : res_.cache_step_hits) n.push_back(float(h));
    Tensor t = Tensor::from_vector(n, {int64_t(n.size())});
    mesh_.cfg->all_reduce_sum(t);
    res_.cache_forwards = int64_t(t.f32()[0]);
    for (size_t i = 0; i < res_.cache_step_hits.size(); ++i) res_.cache_step_hits[i] = int64_t(t.f32()[1 + i]);
  }
  for (int64_t h : res_.cache_step_hits) res_.cache_hits += h;
  log_info("first-block cache: {} of {} forwards skipped their later blocks (threshold {})", res_.cache_hits,
           res_.cache_forwards, settings_.first_block_threshold);
}

}  // namespace

DenoiseResult denoise(const DenoiseModels& models, Scheduler& scheduler, const Tensor& prompt_embeds,
                      const Tensor& negative_prompt_embeds, const Tensor& initial_latents,
                      const DenoiseSettings& settings, Mesh& mesh, const SeqAttentionFactory& attention_factory,
                      const DenoiseCallback& on_step) {
  Timer total;
  DenoiseLoop loop(models, scheduler, prompt_embeds, negative_prompt_embeds, settings, mesh);
  loop.check(initial_latents);
  if (settings.image) check_image_condition(*settings.image, initial_latents.shape());
  std::unique_ptr<SeqAttention> attention = attention_factory ? attention_factory(mesh) : make_local_attention();
  VGEN_CHECK(attention != nullptr, ExitCode::kInternal, "the SeqAttention factory returned nothing");
  scheduler.set_timesteps(settings.num_inference_steps);
  Tensor latents = initial_latents.dtype() == DType::kF32 ? initial_latents.clone() : initial_latents.to(DType::kF32);
  for (int i = 0; i < int(scheduler.timesteps().size()); ++i) {
    latents = loop.step(i, latents, *attention);
    if (on_step) on_step(loop.result().steps.back(), latents);
  }
  wait_marker_step(0, 0);
  loop.count_cache_hits();
  DenoiseResult res = std::move(loop.result());
  res.latents = settings.image ? with_fixed_frames(latents, *settings.image) : latents;  // known frames put back
  res.seconds = total.seconds();
  return res;
}

}  // namespace vgen
