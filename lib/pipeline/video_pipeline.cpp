#include "pipeline/t2v.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>
#include <utility>

#include "core/cuda_stream.h"
#include "core/device_fault.h"
#include "core/log.h"
#include "core/on_unwind.h"
#include "core/timer.h"
#include "dist/bootstrap.h"
#include "io/mp4_writer.h"
#include "dist/device_mesh.h"
#include "dist/node_comm.h"
#include "dist/weight_stream.h"
#include "ops/attention_backend.h"
#include "ops/fp8.h"
#include "model/wan/lora.h"
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

// Test hook VGEN_INJECT_NO_FP8=1 (every rank) or @R (world rank R only): that rank's GPU counts as
// one without FP8 tensor cores, to exercise the refusal on a Hopper machine (docs/fp8.md).
bool inject_no_fp8(int rank) {
  const char* e = std::getenv("VGEN_INJECT_NO_FP8");
  if (!e || !*e) return false;
  const std::string s = e;
  if (s == "1" || s == "all") return true;
  return s[0] == '@' && s.size() > 1 && std::atoi(s.c_str() + 1) == rank;
}

}  // namespace

WanFp8Options wan_fp8_options(const Recipe& recipe) {
  WanFp8Options o;
  if (!recipe.is_fp8()) return o;
  o.attention = recipe.fp8.attention;
  o.gemm = recipe.fp8.gemm;
  o.qk_int8 = recipe.fp8.qk_int8();
  o.gemm_format = recipe.fp8.gemm_int8() ? GemmFormat::kInt8 : GemmFormat::kE4m3;
  o.bf16_blocks = recipe.fp8.bf16_blocks;
  o.bf16_gemm_blocks = recipe.fp8.bf16_gemm_blocks;
  o.bf16_linears = wan_fp8_linear_mask(recipe.fp8.bf16_linears);
  o.keep_weights = !recipe.is_cuda() || recipe.fp8.has_bf16_steps();
  return o;
}

void refuse_fp8_without_device(const Recipe& recipe, Communicator& world) {
  if (!recipe.is_cuda() || !recipe.is_fp8()) return;
  std::string gpu;
  const bool ok = cuda_fp8_available(&gpu) && !inject_no_fp8(world.rank());
  // One all-reduce tells every rank which ranks lack FP8, one broadcast the first one's GPU: all
  // ranks end with the same reason, none waits for a peer in a later collective.
  const int n = world.size(), me = world.rank();
  Tensor bad = Tensor::zeros({n}, DType::kI64);
  bad.data<int64_t>()[me] = ok ? 0 : 1;
  world.all_reduce_max(bad);
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r)
    if (bad.data<int64_t>()[r]) ranks.push_back(r);
  if (ranks.empty()) return;
  constexpr size_t kName = 256;
  Tensor name = Tensor::zeros({int64_t(kName)}, DType::kU8);
  if (me == ranks[0]) std::memcpy(name.raw(), gpu.data(), std::min(gpu.size(), kName - 1));
  world.broadcast(name, ranks[0]);
  const std::string first(static_cast<const char*>(name.raw()));
  std::string others;
  if (ranks.size() > 1) {
    for (size_t i = 0; i < ranks.size() && i < 16; ++i) others += (i ? ", " : "") + std::to_string(ranks[i]);
    others = fmt::format("; {} ranks lack them: {}{}", ranks.size(), others, ranks.size() > 16 ? ", ..." : "");
  }
  VGEN_THROW(ExitCode::kRecipe,
             "{}: precision fp8 needs a GPU with FP8 tensor cores that this build drives (compute capability 9.0, "
             "Hopper, with the build's sm_90a code), but rank {}'s GPU is {}{}; vgen never falls back to bf16 "
             "silently: use precision bf16 on this GPU",
             recipe.source_path, ranks[0], first, others);
}

Json precision_report(const Recipe& recipe) {
  Json j;
  j["precision"] = recipe.precision;
  j["compute"] = dtype_name(recipe.compute_dtype());
  if (!recipe.is_fp8()) return j;
  const Fp8Config& f = recipe.fp8;
  j["emulated"] = !recipe.is_cuda();  // the CPU: the fp8 quantisation, then fp32 math
  j["self_attention"] = !f.attention  ? std::string(dtype_name(recipe.compute_dtype()))
                        : f.qk_int8() ? "fp8 (INT8 Q·Kᵀ, e4m3 P·V)"
                                      : "fp8 e4m3";
  std::string bf16_linears;
  for (const std::string& n : f.bf16_linears) bf16_linears += (bf16_linears.empty() ? "; bf16: " : ", ") + n;
  j["gemm"] = f.gemm ? std::string(f.gemm_int8() ? "INT8" : "fp8 e4m3") + " (block linears" + bf16_linears + ")"
                     : dtype_name(recipe.compute_dtype());
  j["cross_attention"] = dtype_name(recipe.compute_dtype());
  j["fp8_config"] = recipe.resolved.contains("fp8_config") ? recipe.resolved["fp8_config"] : Json::object();
  Json steps = Json::array();
  const int total = recipe.generation.num_inference_steps;
  for (int i = 0; i < total; ++i)
    if (!f.step_in_fp8(i, total)) steps.push_back(i);
  j["bf16_steps"] = steps;  // 0-based indices of the steps that run wholly in bf16
  return j;
}

T2vPipeline::T2vPipeline(const Recipe& recipe, Mesh& mesh) : recipe_(recipe), mesh_(mesh), dir_(recipe.model) {
  const bool leader = mesh.is_replica_leader();
  const bool cuda = recipe.is_cuda();
  Json te_cfg = dir_.component_config("text_encoder");
  text_hidden_ = json_get_or<int64_t>(te_cfg, "d_model", 0);
  VGEN_CHECK(text_hidden_ > 0, ExitCode::kModel, "{}/text_encoder/config.json: no d_model", dir_.root());
  // device: cuda — select this rank's GPU first (collective on its first call, so every rank calls
  // it here) so that every weight lands on it.
  if (cuda) select_mesh_device();
  refuse_fp8_without_device(recipe, *mesh.world);  // precision fp8: collective, before any weight
  // fp8_config.bf16_blocks / bf16_gemm_blocks against each transformer's block count, before any
  // weight is read (every rank reads the same configs, so every rank fails alike).
  if (recipe.is_fp8()) wan_fp8_linear_mask(recipe.fp8.bf16_linears);  // the names of fp8_config.bf16_linears
  if (recipe.is_fp8())
    for (const char* c : {"transformer", "transformer_2"})
      if (dir_.has_component(c))
        Fp8BlockLists{recipe.fp8.bf16_blocks, recipe.fp8.bf16_gemm_blocks}.check(
            WanTransformerConfig::from_json(dir_.component_config(c), dir_.component_path(c) + "/config.json")
                .num_layers);

  // One stream loads every component (dist/weight_stream.h): every rank of a node registers all
  // of them in the same order and requests what it needs; the node reads each byte once.
  const WeightStreamOptions sopt = WeightStreamOptions::from_env();
  std::shared_ptr<Communicator> node_host = sopt.share ? node_host_communicator() : nullptr;
  std::shared_ptr<Communicator> node_dev = cuda && node_host ? node_device_communicator(node_host) : nullptr;
  WeightStream stream(node_host, node_dev, sopt);
  const bool two = dir_.has_component("transformer_2");
  const bool want_vae = mesh.in_vae_group() || (!cuda && leader);
  WeightStore te_store = WeightStore::open(dir_.component_path("text_encoder"));
  WeightStore tr_store = WeightStore::open(dir_.component_path("transformer"));
  WeightStore tr2_store = two ? WeightStore::open(dir_.component_path("transformer_2")) : WeightStore();
  WeightStore vae_store = WeightStore::open(dir_.component_path("vae"));
  const int c_te = stream.add_component("text_encoder", te_store);
  const int c_tr = stream.add_component("transformer", tr_store);
  const int c_tr2 = two ? stream.add_component("transformer_2", tr2_store) : -1;
  const int c_vae = stream.add_component("vae", vae_store);

  if (recipe.generation.boundary_ratio) {
    boundary_ratio_ = recipe.generation.boundary_ratio;
  } else if (dir_.model_index().contains("boundary_ratio") && !dir_.model_index()["boundary_ratio"].is_null()) {
    const std::string src = dir_.root() + "/model_index.json";
    const double b = json_get_or<double>(dir_.model_index(), "boundary_ratio", 0.0, src);  // kModel if not a number
    VGEN_CHECK(b >= 0.0 && b <= 1.0, ExitCode::kModel, "{}: boundary_ratio {} is outside [0, 1]", src, b);
    boundary_ratio_ = b;
  }
  if (boundary_ratio_)
    VGEN_CHECK(two, ExitCode::kModel, "boundary_ratio {} is set but {} has no transformer_2", *boundary_ratio_,
               dir_.root());
  Json vae_json = dir_.component_config("vae");
  WanVaeConfig vcfg = parse_wan_vae_config(vae_json, dir_.component_path("vae") + "/config.json");
  scale_spatial_ = vcfg.scale_factor_spatial;
  scale_temporal_ = vcfg.scale_factor_temporal;

  TextEncoderOptions topt;
  topt.weights = &te_store;
  // The VAE warms up before the first video: its cuDNN plans depend on the shapes alone, so a VAE
  // decoded alone warms up on a thread with random weights of its shapes while the checkpoint
  // streams in (host work mostly: a first plan build on a machine is seconds of JIT); a parallel
  // VAE after the load (collective over its group).
  const bool warm = cuda && mesh.in_vae_group() && vae_warmup_enabled();
  const bool warm_parallel = warm && recipe.parallel.parallel_vae_size > 1;
  if (warm && !warm_parallel) {
    VaeDeviceOptions wopt;
    wopt.dtype = recipe.compute_dtype();
    warm_thread_ = std::thread([this, vcfg, wopt] {
      try {
        cuda_set_device(select_mesh_device());  // the current device is per thread
        warm_up_vae(*WanVaeDeviceDecoder::random(vcfg, wopt, 0x5eedull), nullptr);
      } catch (...) {
        warm_error_ = std::current_exception();
      }
    });
  }
  OnUnwind join_warm_up([this] {  // a load that fails waits for the thread before unwinding
    if (warm_thread_.joinable()) warm_thread_.join();
  });
  if (cuda) {
    // The weights go straight to this rank's GPU: requested now, in place after the stream's run.
    set_attention_backend(parse_attention_backend(recipe.attention.backend));
    if (!recipe.text_on_cuda()) {  // text.device cpu: the encoder's weights into host memory first
      if (leader) stream.request_host(c_te);
      stream.run();
    } else {
      topt.device = Device::kCUDA;
      topt.dtype = recipe.compute_dtype();
      topt.stream = &stream;
      topt.stream_component = c_te;
    }
    if (leader)
      text_ = std::make_unique<TextEncoder>(dir_.component_path("text_encoder"), dir_.component_path("tokenizer"),
                                            topt);
    if (mesh.in_vae_group()) {
      VaeDeviceOptions vopt;
      vopt.dtype = recipe.compute_dtype();
      dvae_ = std::make_shared<WanVaeDeviceDecoder>(vcfg, vae_store, vopt, &stream, c_vae);
    }
    WanDeviceOptions dopt;
    dopt.dtype = recipe.compute_dtype();
    dopt.dwdp_size = recipe.parallel.dwdp_size;
    dopt.world = mesh.world;  // DWDP: each expert's IPC handles are exchanged here (collective)
    // With DWDP the expert runs the stream block by block (collective); the text encoder's and the
    // VAE's bytes come with its first block.
    transformer_ = WanTransformer::stream_to_device(dir_.component_path("transformer"), stream, c_tr, dopt);
    if (two) transformer_2_ = WanTransformer::stream_to_device(dir_.component_path("transformer_2"), stream, c_tr2, dopt);
    // The adapters are read and packed beside the stream; merged into the device weights after it.
    std::future<LoraSet> lora_1 = read_recipe_lora_async(recipe, "transformer", transformer_->config(), true);
    std::future<LoraSet> lora_2 = two ? read_recipe_lora_async(recipe, "transformer_2", transformer_2_->config(), true)
                                      : std::future<LoraSet>();
    stream.run();
    merge_recipe_lora(recipe, *transformer_, transformer_2_.get(), lora_1.get(), two ? lora_2.get() : LoraSet{});
    if (recipe.is_fp8()) {  // quantised from the final (merged) weights
      transformer_->enable_fp8(wan_fp8_options(recipe));
      if (transformer_2_) transformer_2_->enable_fp8(wan_fp8_options(recipe));
    }
    dmesh_ = device_mesh(mesh);  // collective: every rank builds it here
    if (mesh.in_vae_group()) dvae_comm_ = device_vae_communicator(mesh);
    if (warm_thread_.joinable()) warm_thread_.join();
    if (warm_error_) std::rethrow_exception(std::exchange(warm_error_, nullptr));
    if (warm_parallel) warm_up_vae(*dvae_, dvae_comm_.get());  // collective over the VAE group
  } else {
    // The CPU computes on host weights: whole components read into host memory.
    if (leader) stream.request_host(c_te);
    stream.request_host(c_tr);
    if (two) stream.request_host(c_tr2);
    if (want_vae) stream.request_host(c_vae);
    stream.run();
    if (leader)
      text_ = std::make_unique<TextEncoder>(dir_.component_path("text_encoder"), dir_.component_path("tokenizer"),
                                            topt);
    transformer_ = WanTransformer::load(dir_.component_path("transformer"), tr_store);
    if (two) transformer_2_ = WanTransformer::load(dir_.component_path("transformer_2"), tr2_store);
    merge_recipe_lora(recipe, *transformer_, transformer_2_.get());  // into the host weights, before DWDP
    if (recipe.is_fp8()) {  // the CPU emulation of precision fp8
      transformer_->enable_fp8(wan_fp8_options(recipe));
      if (transformer_2_) transformer_2_->enable_fp8(wan_fp8_options(recipe));
    }
    if (recipe.parallel.dwdp_size > 1) {  // collective over the world, as on the GPU
      transformer_->enable_host_dwdp(recipe.parallel.dwdp_size, *mesh.world);
      if (transformer_2_) transformer_2_->enable_host_dwdp(recipe.parallel.dwdp_size, *mesh.world);
    }
    if (want_vae) vae_ = std::make_unique<WanVaeDecoder>(vcfg, vae_store);
  }
  load_stats_ = stream.stats();
  if (leader && recipe.text.cache_embeddings) {
    std::string cdir = recipe.text.cache_dir.empty() ? (fs::path(recipe.output.dir) / ".text_cache").string()
                                                     : recipe.text.cache_dir;
    text_cache_ = std::make_unique<TextCache>(cdir, TextCache::encoder_identity(*text_));
  }
  latent_stats_ = read_latent_stats(vae_json, transformer_->config().in_channels, dir_.root() + "/vae/config.json");
  scheduler_config_ = dir_.component_config("scheduler");
  // Native frame rate: 16 fps for Wan 2.1 / 2.2-A14B, 24 for the 48-channel TI2V-5B family.
  native_fps_ = transformer_->config().in_channels == 48 ? 24 : 16;
}

T2vPipeline::~T2vPipeline() {
  if (warm_thread_.joinable()) warm_thread_.join();  // a constructor that threw leaves it running
}

bool T2vPipeline::vae_warmup_enabled() {
  const char* e = std::getenv("VGEN_VAE_WARMUP");
  return !(e && std::string(e) == "0");
}

void T2vPipeline::warm_up_vae(const WanVaeDeviceDecoder& dec, Communicator* vae_comm) {
  // Two latent frames of the recipe's size meet every conv shape of a decode (the first chunk and a
  // later one), so cuDNN's plans and workspaces exist before the first video.
  Timer t;
  const GenerationConfig& g = recipe_.generation;
  const int64_t C = dec.config().z_dim, h = g.height / scale_spatial_, w = g.width / scale_spatial_;
  Tensor z = make_initial_latents({1, C, std::min<int64_t>(2, (g.num_frames - 1) / scale_temporal_ + 1), h, w}, "",
                                  0x5eedull);  // [1, C, 2, h, w]
  const VaeSplitDim split = parse_vae_split_dim(recipe_.parallel.parallel_vae_split_dim);
  if (vae_comm)
    vae_group_decode_device(dec, z, vae_comm, split);
  else
    dec.decode(z);
  sync_compute_stream();
  log_info("VAE warmed up at {}x{} in {:.2f} s", g.height, g.width, t.seconds());
}

int64_t T2vPipeline::latent_channels() const { return transformer_->config().in_channels; }

Tensor T2vPipeline::encode_text(const T2vJob& job, bool need_negative) {
  const int L = recipe_.generation.max_sequence_length;
  const int64_t n = need_negative ? 2 : 1;
  Tensor embeds = Tensor::empty({n, L, text_hidden_}, DType::kF32);  // [n, L, D]
  bool failed = false;
  std::string error;
  if (mesh_.is_replica_leader()) {
    const DeviceAllocPhase phase("encoding the prompt text");  // named in OOM messages
    try {
      std::vector<std::string> prompts = {job.prompt};
      if (need_negative) prompts.push_back(job.negative_prompt);
      Tensor e = encode_prompts_cached(*text_, text_cache_.get(), prompts, L);  // [n, L, D]
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
  // bf16 latents between steps as the bf16 path (precision fp8 on the GPU: bf16 outside the fp8 ops).
  sched->round_bf16 = recipe_.precision == "bf16" || (recipe_.is_fp8() && recipe_.is_cuda());

  DenoiseSettings ds;
  ds.num_inference_steps = g.num_inference_steps;
  ds.guidance_scale = g.guidance_scale;
  ds.guidance_scale_2 = g.guidance_scale_2;
  ds.boundary_ratio = boundary_ratio_;
  ds.first_block_threshold = recipe_.cache.first_block_threshold;
  ds.fp8 = recipe_.fp8;
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
    const DeviceAllocPhase phase("decoding the video (VAE)");  // named in OOM messages
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
