#include "pipeline/t2v.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/log.h"
#include "core/timer.h"
#include "dist/bootstrap.h"
#include "io/mp4_writer.h"
#include "dist/device_mesh.h"
#include "ops/attention_backend.h"
#include "model/wan/vae_parallel.h"
#include "model/wan/vae_parallel_device.h"
#include "parallel/seq_attention_factory.h"
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

T2vPipeline::T2vPipeline(const Recipe& recipe, Mesh& mesh) : recipe_(recipe), mesh_(mesh), dir_(recipe.model) {
  const bool leader = mesh.is_replica_leader();
  Json te_cfg = dir_.component_config("text_encoder");
  text_hidden_ = json_get_or<int64_t>(te_cfg, "d_model", 0);
  VGEN_CHECK(text_hidden_ > 0, ExitCode::kModel, "{}/text_encoder/config.json: no d_model", dir_.root());
  // device: cuda — select this rank's GPU first (collective on its first call, so every rank calls
  // it here) so that the leader's text encoder lands on it.
  if (recipe.is_cuda()) select_mesh_device();
  if (leader) {
    // device: cuda runs the text encoder on this rank's GPU in the recipe precision.
    TextEncoderOptions topt;
    if (recipe.text_on_cuda()) topt = TextEncoderOptions{Device::kCUDA, recipe.compute_dtype()};
    text_ = std::make_unique<TextEncoder>(dir_.root(), topt);
    if (recipe.text.cache_embeddings) {
      std::string cdir = recipe.text.cache_dir.empty() ? (fs::path(recipe.output.dir) / ".text_cache").string()
                                                       : recipe.text.cache_dir;
      text_cache_ = std::make_unique<TextCache>(cdir, TextCache::encoder_identity(*text_));
    }
  }
  transformer_ = WanTransformer::load(dir_.component_path("transformer"));
  if (dir_.has_component("transformer_2")) transformer_2_ = WanTransformer::load(dir_.component_path("transformer_2"));
  if (recipe.generation.boundary_ratio) {
    boundary_ratio_ = recipe.generation.boundary_ratio;
  } else if (dir_.model_index().contains("boundary_ratio") && !dir_.model_index()["boundary_ratio"].is_null()) {
    boundary_ratio_ = dir_.model_index()["boundary_ratio"].get<double>();
  }
  if (boundary_ratio_)
    VGEN_CHECK(transformer_2_ != nullptr, ExitCode::kModel,
               "boundary_ratio {} is set but {} has no transformer_2", *boundary_ratio_, dir_.root());
  Json vae_json = dir_.component_config("vae");
  WanVaeConfig vcfg = parse_wan_vae_config(vae_json, dir_.component_path("vae") + "/config.json");
  scale_spatial_ = vcfg.scale_factor_spatial;
  scale_temporal_ = vcfg.scale_factor_temporal;
  latent_stats_ = read_latent_stats(vae_json, transformer_->config().in_channels, dir_.root() + "/vae/config.json");
  if (recipe.is_cuda()) {
    set_attention_backend(parse_attention_backend(recipe.attention.backend));
    // The DiT and the VAE run on this rank's GPU (the text encoder too, on the replica leader).
    dmesh_ = device_mesh(mesh);  // collective: every rank builds it here
    WanDeviceOptions dopt;
    dopt.dtype = recipe.compute_dtype();
    dopt.dwdp_size = recipe.parallel.dwdp_size;
    dopt.world = mesh.world;  // DWDP: each expert's IPC handles are exchanged here (collective)
    transformer_->to_device(dopt);
    if (transformer_2_) transformer_2_->to_device(dopt);
    if (mesh.in_vae_group()) {
      VaeDeviceOptions vopt;
      vopt.dtype = recipe.compute_dtype();
      dvae_ = WanVaeDeviceDecoder::load(dir_.component_path("vae"), vopt);
      dvae_comm_ = device_vae_communicator(mesh);
    }
  } else {
    if (recipe.parallel.dwdp_size > 1) {  // collective over the world, as on the GPU
      transformer_->enable_host_dwdp(recipe.parallel.dwdp_size, *mesh.world);
      if (transformer_2_) transformer_2_->enable_host_dwdp(recipe.parallel.dwdp_size, *mesh.world);
    }
    if (mesh.in_vae_group() || leader)
      vae_ = std::make_unique<WanVaeDecoder>(WanVaeDecoder::load(dir_.component_path("vae")));
  }
  scheduler_config_ = dir_.component_config("scheduler");
  // Native frame rate: 16 fps for Wan 2.1 / 2.2-A14B, 24 for the 48-channel TI2V-5B family.
  native_fps_ = transformer_->config().in_channels == 48 ? 24 : 16;
}

T2vPipeline::~T2vPipeline() = default;

int64_t T2vPipeline::latent_channels() const { return transformer_->config().in_channels; }

Tensor T2vPipeline::encode_text(const T2vJob& job, bool need_negative) {
  const int L = recipe_.generation.max_sequence_length;
  const int64_t n = need_negative ? 2 : 1;
  Tensor embeds = Tensor::empty({n, L, text_hidden_}, DType::kF32);  // [n, L, D]
  bool failed = false;
  std::string error;
  if (mesh_.is_replica_leader()) {
    try {
      std::vector<std::string> prompts = {job.prompt};
      if (need_negative) prompts.push_back(job.negative_prompt);
      Tensor e = encode_prompts_cached(*text_, text_cache_.get(), prompts, L);  // [n, L, D]
      VGEN_CHECK(e.shape() == embeds.shape(), ExitCode::kInput, "text encoder returned {} (expected {})", e.str(),
                 shape_str(embeds.shape()));
      embeds.copy_from(e);
    } catch (const Error& e) {
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

T2vOutput T2vPipeline::render(const T2vJob& job, const T2vStepHook& hook) {
  Timer total;
  T2vOutput out;
  const GenerationConfig& g = recipe_.generation;
  const bool do_cfg = g.guidance_scale > 1.0;

  Timer t_text;
  Tensor embeds = encode_text(job, do_cfg);  // [1|2, L, D]
  Tensor cond = embeds.narrow(0, 1).clone();
  Tensor uncond = do_cfg ? embeds.narrow(1, 1).clone() : Tensor();
  out.seconds.text_encode = t_text.seconds();

  Shape shape = latent_shape(1, latent_channels(), job.num_frames, job.height, job.width, scale_temporal_, scale_spatial_);
  Tensor init = job.initial_latents.defined() ? job.initial_latents
                                             : make_initial_latents(shape, g.initial_latents, uint64_t(job.seed));
  VGEN_CHECK(init.shape() == shape, ExitCode::kInput, "initial latents {} do not match the latent shape {}", init.str(),
             shape_str(shape));

  SchedulerOverrides ov;
  ov.kind = g.scheduler;
  ov.flow_shift = g.flow_shift;
  std::unique_ptr<Scheduler> sched = make_scheduler(scheduler_config_, ov);
  sched->round_bf16 = recipe_.precision == "bf16";

  DenoiseSettings ds;
  ds.num_inference_steps = g.num_inference_steps;
  ds.guidance_scale = g.guidance_scale;
  ds.guidance_scale_2 = g.guidance_scale_2;
  ds.boundary_ratio = boundary_ratio_;
  ds.first_block_threshold = recipe_.cache.first_block_threshold;
  DenoiseModels models{transformer_.get(), transformer_2_.get()};
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
  DenoiseResult dr = denoise(models, *sched, cond, uncond, init, ds, dmesh_ ? *dmesh_ : mesh_, factory, on_step);
  out.latents = dr.latents;
  out.seconds.denoise = dr.seconds;
  for (auto& s : dr.steps) out.step_timesteps.push_back(s.timestep);
  out.cache_forwards = dr.cache_forwards, out.cache_hits = dr.cache_hits;
  out.cache_step_hits = dr.cache_step_hits;

  Timer t_vae;
  if (mesh_.in_vae_group() || mesh_.is_replica_leader()) {
    Tensor z = denormalize_latents(dr.latents, latent_stats_);  // [1, C, T, h, w]
    Tensor video;
    const VaeSplitDim split = parse_vae_split_dim(recipe_.parallel.parallel_vae_split_dim);
    if (dvae_)
      video = vae_group_decode_device(*dvae_, z, dvae_comm_.get(), split).to(Device::kCPU);
    else if (mesh_.vae && mesh_.vae->size() > 1)
      video = parallel_vae_decode(*vae_, z, *mesh_.vae, split);
    else
      video = vae_->decode(z);  // [1, 3, F, H, W]
    if (mesh_.is_replica_leader()) {
      out.video = video;
      out.frames = video_to_u8_frames(video);  // [F, H, W, 3]
    }
  }
  out.seconds.vae_decode = t_vae.seconds();
  out.seconds.total = total.seconds();
  return out;
}

}  // namespace vgen
