// vgen_cosmos3_bench: Cosmos 3 on one GPU at the real shapes, random bf16 weights made on the device
// (no checkpoint; the time embedder f32, the token embedding a host table, as the loader leaves
// them) or a checkpoint's (--model, streamed as `vgen run` loads it). Per shape it times, with CUDA
// events (median of --reps after --warmup):
//   prefill_seconds          the understanding tower over the conditional prompt (--prompt-tokens ids),
//                            which a video runs once per prompt (prefill_uncond_seconds: the negative
//                            prompt's, --uncond-tokens ids)
//   seconds                  one CFG step of the generation tower as the denoising loop runs it: the
//                            conditional and the unconditional forward over [prompt K/V | video]
//                            (patch embedding, time embedding, every generation layer, proj_out,
//                            unpatchify), forwards_per_measurement 2; cond_seconds, uncond_seconds alone
// The peer (scripts/bench/peer/diffusers_cosmos3_bench.py dit) times the same CFG step, whose
// forwards recompute the understanding tower every time; vgen's DiT time per step is `seconds`,
// and a video's DiT time is steps × seconds + both prefills (video_dit_seconds, --steps).
// Prints one JSON line per shape (lines starting with '#' are human-readable), appended to --out.
//
// Usage: vgen_cosmos3_bench [--config DIR | --model DIR] [--layers N] [--shapes 720p | HxWxF,...]
//                           [--prompt-tokens 256] [--uncond-tokens 64] [--fps 24] [--steps 35]
//                           [--reps 3] [--warmup 1] [--fp8 all|gemm|attention] [--fp8-qk e4m3|int8]
//                           [--fp8-gemm int8|e4m3] [--attention auto|native|cudnn] [--out FILE] [--tag TEXT]
//   --config: a transformer directory (default recipes/models/cosmos3-nano/transformer), --layers
//   overriding num_hidden_layers; --model: a Cosmos3OmniPipeline checkpoint (its transformer/).
//   720p is 720×1280×189 (the recipe's 189 frames at 24 fps); the latents are the Wan 2.2 VAE's
//   [1, 48, (F − 1)/4 + 1, H/16, W/16]. --fp8: precision fp8 on the generation tower (docs/cosmos3.md):
//   all, the linears only (gemm) or the attention only.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_allocator.h"
#include "core/json.h"
#include "model/cosmos3/transformer.h"
#include "ops/attention_backend.h"
#include "ops/dit_device_ops.h"

#ifndef VGEN_SOURCE_DIR
#define VGEN_SOURCE_DIR "."
#endif

using namespace vgen;

namespace {

struct Args {
  std::vector<std::string> shapes = {"720p"};
  std::string config = std::string(VGEN_SOURCE_DIR) + "/recipes/models/cosmos3-nano/transformer";
  std::string model, out, tag, attention = "auto";
  std::string fp8, fp8_qk = "e4m3", fp8_gemm = "int8";
  int layers = 0, prompt_tokens = 256, uncond_tokens = 64, steps = 35, reps = 3, warmup = 1;
  double fps = 24.0;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "vgen_cosmos3_bench: %s\n(see the header of tests/bench/cosmos3_bench.cpp)\n", why.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& v) {
  std::vector<std::string> out;
  for (size_t p = 0; p <= v.size();) {
    size_t q = v.find(',', p);
    if (q == std::string::npos) q = v.size();
    if (q > p) out.push_back(v.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  bool config_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + k);
      return argv[++i];
    };
    if (k == "--shapes") a.shapes = split(val());
    else if (k == "--config") a.config = val(), config_given = true;
    else if (k == "--model") a.model = val();
    else if (k == "--layers") a.layers = std::atoi(val().c_str());
    else if (k == "--prompt-tokens") a.prompt_tokens = std::atoi(val().c_str());
    else if (k == "--uncond-tokens") a.uncond_tokens = std::atoi(val().c_str());
    else if (k == "--fps") a.fps = std::atof(val().c_str());
    else if (k == "--steps") a.steps = std::atoi(val().c_str());
    else if (k == "--reps") a.reps = std::max(1, std::atoi(val().c_str()));
    else if (k == "--warmup") a.warmup = std::max(0, std::atoi(val().c_str()));
    else if (k == "--fp8") a.fp8 = val();
    else if (k == "--fp8-qk") a.fp8_qk = val();
    else if (k == "--fp8-gemm") a.fp8_gemm = val();
    else if (k == "--attention") a.attention = val();
    else if (k == "--out") a.out = val();
    else if (k == "--tag") a.tag = val();
    else usage("unknown argument " + k);
  }
  if (!a.model.empty() && (config_given || a.layers > 0)) usage("--model brings its own config (no --config, --layers)");
  if (a.prompt_tokens < 1 || a.uncond_tokens < 1 || a.steps < 1 || a.fps <= 0)
    usage("--prompt-tokens, --uncond-tokens, --steps and --fps must be positive");
  if (!a.fp8.empty() && a.fp8 != "all" && a.fp8 != "gemm" && a.fp8 != "attention") usage("--fp8 all|gemm|attention");
  if (a.fp8_qk != "e4m3" && a.fp8_qk != "int8") usage("--fp8-qk e4m3|int8");
  if (a.fp8_gemm != "int8" && a.fp8_gemm != "e4m3") usage("--fp8-gemm int8|e4m3");
  return a;
}

struct VideoShape {
  int height, width, frames;
};
VideoShape parse_shape(const std::string& s) {
  if (s == "720p") return {720, 1280, 189};
  VideoShape v{};
  if (std::sscanf(s.c_str(), "%dx%dx%d", &v.height, &v.width, &v.frames) != 3 || v.height < 16 || v.width < 16 ||
      v.frames < 1 || (v.frames - 1) % 4 != 0)
    usage("bad shape " + s + " (720p or HxWxF, F = 4k + 1)");
  return v;
}

// The config of --config with --layers applied (checked before the device is looked for).
Cosmos3Config bench_config(const Args& a) {
  const std::string dir = a.model.empty() ? a.config : (std::filesystem::path(a.model) / "transformer").string();
  Cosmos3Config c = Cosmos3Config::load(dir);
  if (a.layers > 0) c.num_hidden_layers = a.layers;
  c.validate(dir + "/config.json (benchmark)");
  return c;
}

// A device tensor of `dtype`: N(0, 0.02²), or `value` everywhere when value >= 0.
Tensor device_tensor(const Shape& s, DType dtype, uint64_t& seed, float value = -1.0f) {
  Tensor t = Tensor::empty(s, dtype, Device::kCUDA);
  if (value >= 0) cuda_fill_constant(t, value);
  else cuda_fill_normal(t, seed++, 0.0f, 0.02f);
  return t;
}

Cosmos3Tower random_tower(const Cosmos3Config& c, bool qk_norm, uint64_t& seed) {
  const int64_t D = c.hidden_size, F = c.intermediate_size, Dh = c.head_dim, QD = c.q_dim(), KD = c.kv_dim();
  const DType bf = DType::kBF16;
  auto lin = [&](int64_t n, int64_t k, bool bias) {
    LinearWeights l;
    l.w = device_tensor({n, k}, bf, seed);  // [N, K]
    if (bias) l.b = device_tensor({n}, bf, seed);
    return l;
  };
  Cosmos3Tower t;
  t.in_norm = device_tensor({D}, bf, seed, 1.0f);
  t.post_norm = device_tensor({D}, bf, seed, 1.0f);
  t.q = lin(QD, D, c.attention_bias);
  t.k = lin(KD, D, c.attention_bias);
  t.v = lin(KD, D, c.attention_bias);
  t.o = lin(D, QD, c.attention_bias);
  if (qk_norm) {
    t.q_norm = device_tensor({Dh}, bf, seed, 1.0f);
    t.k_norm = device_tensor({Dh}, bf, seed, 1.0f);
  }
  if (c.hidden_act == Cosmos3Act::kSilu) t.gate = lin(F, D, false);
  t.up = lin(F, D, false);
  t.down = lin(D, F, false);
  return t;
}

// Random weights in the loader's placement: towers, norms and projections bf16 on the device, the
// time embedder f32, the token embedding a host bf16 table (filled on the device, copied once).
Cosmos3Weights random_weights(const Cosmos3Config& c) {
  uint64_t seed = 20261207;
  const int64_t D = c.hidden_size, P = c.patch_latent_dim;
  Cosmos3Weights w;
  w.embed = device_tensor({c.vocab_size, D}, DType::kBF16, seed).to(Device::kCPU);  // [V, D]
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    Cosmos3Layer l;
    l.und = random_tower(c, c.qk_norm_for_text, seed);
    if (c.has_und_k_norm_for_gen()) l.und.k_norm_for_gen = device_tensor({c.head_dim}, DType::kBF16, seed, 1.0f);
    l.gen = random_tower(c, true, seed);
    w.layers.push_back(std::move(l));
  }
  w.norm_gen = device_tensor({D}, DType::kBF16, seed, 1.0f);
  w.proj_in = {device_tensor({D, P}, DType::kBF16, seed), device_tensor({D}, DType::kBF16, seed), {}, {}};
  w.proj_out = {device_tensor({P, D}, DType::kBF16, seed), device_tensor({P}, DType::kBF16, seed), {}, {}};
  w.time1 = {device_tensor({D, c.timestep_channels}, DType::kF32, seed), device_tensor({D}, DType::kF32, seed), {}, {}};
  w.time2 = {device_tensor({D, D}, DType::kF32, seed), device_tensor({D}, DType::kF32, seed), {}, {}};
  sync_compute_stream();
  return w;
}

std::vector<int64_t> random_ids(int n, int vocab, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int64_t> d(0, vocab - 1);
  std::vector<int64_t> ids(size_t(n), 0);
  for (auto& x : ids) x = d(g);
  return ids;
}

// FLOPs of the generation tower's forward over S video tokens after L prompt tokens, and of the
// prefill over L tokens (GEMMs and attention; multiply-add = 2).
double tower_flops(const Cosmos3Config& c, double rows, double keys, bool causal) {
  const double D = c.hidden_size, F = c.intermediate_size, QD = c.q_dim(), KD = c.kv_dim();
  const double mlp = c.hidden_act == Cosmos3Act::kSilu ? 3.0 : 2.0;
  const double gemm = 2.0 * rows * (2 * D * QD + 2 * D * KD + mlp * D * F);
  const double attn = 4.0 * rows * keys * c.head_dim * c.num_attention_heads * (causal ? 0.5 : 1.0);
  return c.num_hidden_layers * (gemm + attn);
}

struct Timing {
  double median = 0;
  std::vector<double> all;
};
Timing time_it(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  Timing t;
  for (int i = 0; i < reps; ++i) {
    CudaEventTimer tm;
    tm.start();
    fn();
    tm.stop();
    t.all.push_back(tm.seconds());
  }
  std::vector<double> s = t.all;
  std::sort(s.begin(), s.end());
  t.median = s[s.size() / 2];
  return t;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void emit(const Json& j, const Args& a) {
  const std::string line = j.dump();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  if (!a.out.empty()) std::ofstream(a.out, std::ios::app) << line << "\n";
}

// One shape: both prompts' prefills, then the CFG step's two forwards; one JSON line.
Json measure(const Cosmos3Transformer& model, const Args& a, const std::string& shape) {
  const Cosmos3Config& c = model.config();
  const VideoShape vs = parse_shape(shape);
  const int64_t T = (vs.frames - 1) / 4 + 1, H = vs.height / 16, W = vs.width / 16, p = c.latent_patch_size;
  const int64_t S = T * ((H + p - 1) / p) * ((W + p - 1) / p);
  Cosmos3VideoInput in;
  in.latents = Tensor::empty({1, c.latent_channel, T, H, W}, DType::kF32, Device::kCUDA);  // [1, C, T, H, W]
  cuda_fill_normal(in.latents, 1, 0.0f, 1.0f);
  in.timestep = 500.0f;
  for (int64_t f = 0; f < T; ++f) in.noisy_frames.push_back(f);
  in.fps = a.fps;
  const std::vector<int64_t> ids_c = random_ids(a.prompt_tokens, c.vocab_size, 1);
  const std::vector<int64_t> ids_u = random_ids(a.uncond_tokens, c.vocab_size, 2);

  DeviceAllocator::instance().reset_peak();
  Cosmos3PromptKv kv_c, kv_u;
  const Timing pre_c = time_it([&] { kv_c = model.prefill(ids_c); }, a.warmup, a.reps);
  const Timing pre_u = time_it([&] { kv_u = model.prefill(ids_u); }, a.warmup, a.reps);
  Tensor v;  // [1, C, T, H, W] f32 (device)
  const Timing step = time_it([&] { v = model.forward(kv_c, in), v = model.forward(kv_u, in); }, a.warmup, a.reps);
  const Timing cond = time_it([&] { v = model.forward(kv_c, in); }, 0, a.reps);
  const Timing uncond = time_it([&] { v = model.forward(kv_u, in); }, 0, a.reps);
  const DeviceAllocatorStats mem = DeviceAllocator::instance().stats();
  const Tensor hv = v.to(Device::kCPU);
  double sumsq = 0;
  bool finite = true;
  for (int64_t i = 0; i < hv.numel(); ++i) {
    finite = finite && std::isfinite(hv.f32()[i]);
    sumsq += double(hv.f32()[i]) * hv.f32()[i];
  }
  const double prefills = pre_c.median + pre_u.median, video = a.steps * step.median + prefills;
  const double step_flops = tower_flops(c, double(S), double(S + a.prompt_tokens), false) +
                            tower_flops(c, double(S), double(S + a.uncond_tokens), false);
  Json j;
  j["bench"] = "cosmos3_dit", j["impl"] = "vgen", j["date"] = utc_now();
  j["height"] = vs.height, j["width"] = vs.width, j["frames"] = vs.frames;
  j["latent"] = {c.latent_channel, T, H, W}, j["tokens"] = S;
  j["prompt_tokens"] = a.prompt_tokens, j["uncond_tokens"] = a.uncond_tokens;
  j["layers"] = c.num_hidden_layers, j["hidden_size"] = c.hidden_size, j["fps"] = a.fps;
  j["precision"] = a.fp8.empty() ? "bf16" : "fp8";
  if (!a.fp8.empty()) j["fp8"] = a.fp8, j["fp8_qk"] = a.fp8_qk, j["fp8_gemm"] = a.fp8_gemm;
  j["attention"] = a.attention;
  j["forwards_per_measurement"] = 2;
  j["seconds"] = step.median, j["seconds_all"] = step.all;
  j["cond_seconds"] = cond.median, j["uncond_seconds"] = uncond.median;
  j["prefill_seconds"] = pre_c.median, j["prefill_uncond_seconds"] = pre_u.median;
  j["steps"] = a.steps, j["video_dit_seconds"] = video, j["prefill_share_of_dit"] = prefills / video;
  j["step_tflops"] = step_flops / step.median / 1e12;
  j["prefill_tflops"] = tower_flops(c, a.prompt_tokens, a.prompt_tokens, true) / pre_c.median / 1e12;
  j["peak_mem_gib"] = double(mem.peak_in_use_bytes) / 1073741824.0;
  j["peak_reserved_gib"] = double(mem.peak_reserved_bytes) / 1073741824.0;
  j["output_finite"] = finite;
  j["output_rms"] = std::sqrt(sumsq / double(std::max<int64_t>(1, hv.numel())));
  if (!a.model.empty()) j["model"] = a.model;
  else j["config"] = a.config;
  if (!a.tag.empty()) j["tag"] = a.tag;
  std::printf("# %s (%lld tokens): CFG step %.3f s (cond %.3f, uncond %.3f), prefill %.4f + %.4f s, "
              "prefill share of the DiT over %d steps %.3f%%, peak %.1f GiB\n",
              shape.c_str(), (long long)S, step.median, cond.median, uncond.median, pre_c.median, pre_u.median,
              a.steps, 100.0 * prefills / video, double(j["peak_mem_gib"]));
  VGEN_CHECK(finite, ExitCode::kInternal, "the {} forward produced non-finite values", shape);
  return j;
}

// The model: random weights on the device, or the checkpoint's streamed as `vgen run` loads them.
Cosmos3Transformer make_model(const Args& a, const Cosmos3Config& cfg, double& load_seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  Cosmos3Transformer m =
      a.model.empty()
          ? Cosmos3Transformer(cfg, random_weights(cfg), Device::kCUDA, DType::kBF16)
          : Cosmos3Transformer::load((std::filesystem::path(a.model) / "transformer").string(), Device::kCUDA,
                                     DType::kBF16);
  load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.attention_policy.backend = parse_attention_backend(a.attention);
  if (!a.fp8.empty()) {
    Cosmos3Fp8Options o;
    o.gemm = a.fp8 != "attention";
    o.attention = a.fp8 != "gemm";
    o.qk_int8 = a.fp8_qk == "int8";
    o.gemm_format = a.fp8_gemm == "int8" ? GemmFormat::kInt8 : GemmFormat::kE4m3;
    o.keep_weights = false;  // as a GPU run without bf16 steps: the quantised linears' bf16 copies go
    m.enable_fp8(o);
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const Cosmos3Config cfg = bench_config(a);
    for (const std::string& s : a.shapes) parse_shape(s);
    std::printf("# %s: %d layers, hidden %d, %d heads (%d KV) x %d, MLP %d\n",
                (a.model.empty() ? a.config : a.model).c_str(), cfg.num_hidden_layers, cfg.hidden_size,
                cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, cfg.intermediate_size);
    if (cuda_device_count() == 0) {
      std::printf("[  SKIPPED ] vgen_cosmos3_bench: no CUDA device\n");
      return 0;
    }
    double load_seconds = 0;
    const Cosmos3Transformer model = make_model(a, cfg, load_seconds);
    const DeviceAllocatorStats mem = DeviceAllocator::instance().stats();
    std::printf("# %s, weights on the device %.2f GiB, made/loaded in %.1f s\n", a.fp8.empty() ? "bf16" : "fp8",
                double(mem.in_use_bytes) / 1073741824.0, load_seconds);
    for (const std::string& s : a.shapes) {
      Json j = measure(model, a, s);
      j["load_seconds"] = load_seconds;
      j["weights_gib"] = double(mem.in_use_bytes) / 1073741824.0;
      emit(j, a);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "vgen_cosmos3_bench: %s\n", e.what());
    return int(e.code());
  }
  return 0;
}
