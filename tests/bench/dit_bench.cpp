// vgen_dit_bench: Wan2.1-14B DiT forward on the GPU with random bf16 weights (no checkpoint), at the
// real shapes of 480×832×81 (32,760 tokens) and 720×1280×81 (75,600 tokens), timed with CUDA
// events (median of --reps after --warmup), as the diffusers peer measures it
// (scripts/bench/peer/diffusers_wan_bench.py: text embedding + blocks + head in every forward).
// Prints one JSON line per measurement (lines starting with '#' are human-readable) and appends
// them to --out. A profiled forward (each op bracketed by events) splits the time into GEMMs,
// self-attention, cross-attention and other, with the achieved TFLOP/s.
// host_enqueue_seconds: host time to queue one forward; near `seconds` it would mean the host, not
// the GPU, sets the pace (launch gaps).
//
// Usage: vgen_dit_bench [--shapes 480p,720p | HxWxF,...] [--layers N] [--reps 3] [--warmup 1]
//                       [--fp32] [--separate-gelu] [--separate-residual] [--no-profile] [--cfg-step]
//                       [--first-block-cache] [--attention auto|native|cudnn] [--fp8 all|attention|gemm]
//                       [--fp8-qk e4m3|int8] [--fp8-gemm e4m3|int8] [--model DIR] [--timestep T]
//                       [--config DIR] [--image-tokens N] [--out FILE] [--tag TEXT]
//        mpirun -np N vgen_dit_bench --mode MESH [--cfg-step] [--async-ulysses] [--dwdp D] ...
//   MESH: factors joined by '-', each cfg|ulysses|ring|attn2d with its size (cfg2, ulysses4, ring4,
//   attn2d1x2; a bare name means 2, attn2d 1x2), e.g. cfg2-ulysses4, cfg2-ulysses2-attn2d1x2; N is
//   their product. --cfg-step: each measurement is one CFG step, the two forwards of the two text
//   streams (with cfg 2 they run on the two halves of the mesh, as always). --dwdp D: groups of D
//   ranks share one copy of the blocks (DWDP). phases_seconds are one rank's: both streams with
//   --cfg-step on a mesh without cfg, one stream per rank with cfg 2. --first-block-cache: after
//   the plain forwards, the cost of a forward the first-block cache cuts short against the one
//   that fills the cache (one sample, with the cache's first allocations), both measured as above
//   (text embedding + K/V, the blocks, head, gathered tokens, unpatchify; a cut forward runs block
//   0, the decision over the sequence group and the cached update instead of the blocks), in
//   first_block_cache {fill_seconds, hit_seconds}; one stream per rank (not with --cfg-step or
//   --dwdp). Random weights: the decision itself is forced (an infinite threshold).
//   --attention: attention_config.backend of the run (default auto), recorded as "attention".
//   --fp8: precision fp8 (docs/fp8.md) for every forward: all, or only the self-attention or only
//   the block GEMMs in e4m3 (bf16 weights of the quantised linears freed); recorded as "fp8".
//   --fp8-qk: the fp8 self-attention's Q·Kᵀ in e4m3 (default) or INT8; recorded as "fp8_qk".
//   --fp8-gemm: the quantised block linears' format, INT8 (default, as fp8_config.gemm_format) or e4m3;
//   recorded as "fp8_gemm".
//   --model DIR: the weights of a Diffusers checkpoint's transformer/ (its config sets the layers;
//   not with --layers or --dwdp) instead of random ones, so that the forward is timed on the
//   weights a run uses (clocks under the power cap follow the data); recorded as "model". The peer
//   takes the same option (scripts/bench/peer/diffusers_wan_bench.py; gpu_suite.sh DIT_MODEL).
//   --config DIR: random weights of the transformer config in DIR/config.json (e.g.
//   recipes/models/wan2.1-i2v-14b-720p/transformer: in_channels 36 and the image path) instead of
//   Wan2.1-T2V-14B's; --layers still overrides its num_layers; recorded as "config".
//   A model with the image path (image_dim set) gets random image tokens [1, N, image_dim] through
//   prepare_text in every forward, N = --image-tokens (default 257: CLIP ViT-H/14 at 224 px, 16²
//   patches + the class token) or the config's pos_embed_seq_len (FLF2V: both images); the peer is
//   scripts/bench/peer/diffusers_i2v_bench.py dit (gpu_suite.sh dit_i2v).
#include <cuda_runtime.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_allocator.h"
#include "core/json.h"
#include "dist/bootstrap.h"
#include "dist/device_mesh.h"
#include "dist/weight_stream.h"
#include "kernels/gemm/gemm.cuh"
#include "io/attention_tuning.h"
#include "model/wan/dit/transformer.h"
#include "ops/attention_backend.h"
#include "ops/device_ops.h"
#include "ops/dit_device_ops.h"
#include "parallel/local_attention.h"
#include "parallel/seq_attention_factory.h"
#include "model/dit_step.h"
#include "dit_flops.h"

#ifndef VGEN_GIT_DESCRIBE
#define VGEN_GIT_DESCRIBE ""
#endif

using namespace vgen;

namespace {

struct Args {
  std::vector<std::string> shapes = {"480p", "720p"};
  int layers = 40, reps = 3, warmup = 1, dwdp = 1;
  bool fp32 = false, fused_gelu = true, fused_residual = true, profile = true, async_ulysses = false;
  bool cfg_step = false, first_block_cache = false;
  std::string mode = "single", out, tag, attention = "auto";
  std::string fp8;  // precision fp8: all | attention | gemm; empty: bf16 / fp32
  std::string fp8_qk = "e4m3";  // fp8_config.attention_qk
  std::string fp8_gemm = "int8";  // fp8_config.gemm_format (its default)
  std::string model;  // a Diffusers checkpoint's root: its transformer's weights, not random ones
  std::string config;  // a transformer directory: random weights of its config.json
  int image_tokens = 257;  // CLIP tokens per image, for a config with the image path
  bool layers_given = false;
  float timestep = 500.0f;  // the diffusion timestep of every forward (modulation follows it)
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "vgen_dit_bench: %s\n(see the header of tests/bench/dit_bench.cpp for the options)\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + k);
      return argv[++i];
    };
    if (k == "--shapes") {
      a.shapes.clear();
      std::string v = val();
      for (size_t p = 0; p <= v.size();) {
        size_t q = v.find(',', p);
        if (q == std::string::npos) q = v.size();
        if (q > p) a.shapes.push_back(v.substr(p, q - p));
        p = q + 1;
      }
    } else if (k == "--layers") a.layers = std::atoi(val().c_str()), a.layers_given = true;
    else if (k == "--reps") a.reps = std::max(1, std::atoi(val().c_str()));
    else if (k == "--warmup") a.warmup = std::max(0, std::atoi(val().c_str()));
    else if (k == "--timestep") a.timestep = float(std::atof(val().c_str()));
    else if (k == "--fp32") a.fp32 = true;
    else if (k == "--separate-gelu") a.fused_gelu = false;
    else if (k == "--separate-residual") a.fused_residual = false;
    else if (k == "--no-profile") a.profile = false;
    else if (k == "--mode") a.mode = val();
    else if (k == "--async-ulysses") a.async_ulysses = true;
    else if (k == "--cfg-step") a.cfg_step = true;
    else if (k == "--first-block-cache") a.first_block_cache = true;
    else if (k == "--dwdp") a.dwdp = std::max(1, std::atoi(val().c_str()));
    else if (k == "--out") a.out = val();
    else if (k == "--tag") a.tag = val();
    else if (k == "--attention") a.attention = val();
    else if (k == "--fp8") a.fp8 = val();
    else if (k == "--fp8-qk") a.fp8_qk = val();
    else if (k == "--fp8-gemm") a.fp8_gemm = val();
    else if (k == "--model") a.model = val();
    else if (k == "--config") a.config = val();
    else if (k == "--image-tokens") a.image_tokens = std::atoi(val().c_str());
    else usage("unknown argument " + k);
  }
  if (a.layers < 1) usage("--layers must be >= 1");
  if (!a.model.empty()) {
    if (a.layers_given || a.dwdp > 1) usage("--model: the checkpoint's config sets the layers (no --layers), no --dwdp");
    if (!std::filesystem::is_regular_file(std::filesystem::path(a.model) / "transformer" / "config.json"))
      usage("--model " + a.model + ": no transformer/config.json there (a Diffusers checkpoint's root)");
  }
  if (!a.config.empty()) {
    if (!a.model.empty()) usage("--config and --model exclude each other (--model brings its own config)");
    if (!std::filesystem::is_regular_file(std::filesystem::path(a.config) / "config.json"))
      usage("--config " + a.config + ": no config.json there (a transformer directory)");
  }
  if (a.image_tokens < 1) usage("--image-tokens must be >= 1");
  if (a.first_block_cache && (a.cfg_step || a.dwdp > 1)) usage("--first-block-cache runs one stream without DWDP");
  if (!a.fp8.empty() && a.fp8 != "all" && a.fp8 != "attention" && a.fp8 != "gemm") usage("--fp8 all|attention|gemm");
  if (a.fp8_qk != "int8" && a.fp8_qk != "e4m3") usage("--fp8-qk int8|e4m3");
  if (a.fp8_gemm != "int8" && a.fp8_gemm != "e4m3") usage("--fp8-gemm int8|e4m3");
  if (!a.fp8.empty() && (a.fp32 || (a.dwdp > 1 && a.fp8 != "attention")))
    usage("--fp8 computes in bf16 around the fp8 ops (not with --fp32), fp8 GEMMs not with --dwdp");
  return a;
}

struct VideoShape {
  int height, width, frames;
};
VideoShape parse_shape(const std::string& s) {
  if (s == "480p") return {480, 832, 81};
  if (s == "720p") return {720, 1280, 81};
  VideoShape v{};
  if (std::sscanf(s.c_str(), "%dx%dx%d", &v.height, &v.width, &v.frames) != 3) usage("bad shape " + s);
  return v;
}

// A whole decimal number >= 1, or -1 (std::from_chars: no sign, no trailing characters).
int parse_size(std::string_view v) {
  int n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() && end == v.data() + v.size() && n >= 1 && !v.empty() ? n : -1;
}

// --mode: "single", or factors such as cfg2-ulysses4 (see the header), each named once.
ParallelConfig parse_mesh(const std::string& mode) {
  ParallelConfig pc;
  if (mode == "single") return pc;
  std::set<std::string> seen;
  for (size_t p = 0; p <= mode.size();) {
    size_t q = mode.find('-', p);
    if (q == std::string::npos) q = mode.size();
    const std::string f = mode.substr(p, q - p);
    p = q + 1;
    std::string name, num;
    for (const char* known : {"attn2d", "cfg", "ulysses", "ring"})  // attn2d first: its name holds a digit
      if (f.rfind(known, 0) == 0) {
        name = known;
        num = f.substr(name.size());
        break;
      }
    if (name.empty())
      usage("unknown mesh factor '" + f + "' in --mode " + mode + " (cfg, ulysses, ring, attn2d)");
    if (!seen.insert(name).second) usage("--mode " + mode + " names " + name + " twice");
    if (name == "attn2d") {
      const size_t x = num.find('x');
      const int r = num.empty() ? 1 : x == std::string::npos ? -1 : parse_size(std::string_view(num).substr(0, x));
      const int c = num.empty() ? 2 : x == std::string::npos ? -1 : parse_size(std::string_view(num).substr(x + 1));
      if (r < 1 || c < 1) usage("bad attn2d size '" + num + "' in --mode " + mode + " (RxC, e.g. attn2d1x2)");
      pc.attn2d_size = {r, c};
      continue;
    }
    const int n = num.empty() ? 2 : parse_size(num);
    if (n < 1) usage("bad size '" + num + "' of " + name + " in --mode " + mode);
    if (name == "cfg") pc.cfg_size = n;
    else if (name == "ulysses") pc.ulysses_size = n;
    else pc.ring_size = n;
  }
  if (pc.ring_size > 1 && pc.attn2d_size[0] * pc.attn2d_size[1] > 1) usage("--mode: ring and attn2d exclude each other");
  return pc;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// $VGEN_COMMIT (set by scripts/bench/run_dit_bench.sh where the checkout has no .git), else the
// commit at configure time, else `git describe` now.
std::string git_describe() {
  if (const char* e = std::getenv("VGEN_COMMIT"); e && *e) return e;
  std::string d = VGEN_GIT_DESCRIBE;
  if (!d.empty()) return d;
  if (FILE* p = popen("git describe --always --dirty 2>/dev/null", "r")) {
    char buf[128] = {0};
    if (std::fgets(buf, sizeof(buf), p)) d = buf;
    pclose(p);
  }
  while (!d.empty() && (d.back() == '\n' || d.back() == '\r')) d.pop_back();
  return d.empty() ? "unknown" : d;
}

WanTransformerConfig wan21_14b(int layers) {
  WanTransformerConfig c;  // the constructor defaults are Wan2.1-14B's
  c.num_attention_heads = 40;
  c.attention_head_dim = 128;
  c.in_channels = c.out_channels = 16;
  c.text_dim = 4096;
  c.freq_dim = 256;
  c.ffn_dim = 13824;
  c.num_layers = layers;
  c.validate("Wan2.1-14B benchmark config");
  return c;
}

// --config: the directory's transformer config, --layers overriding its depth; else Wan2.1-T2V-14B.
WanTransformerConfig bench_config(const Args& a) {
  if (a.config.empty()) return wan21_14b(a.layers);
  WanTransformerConfig c = WanTransformerConfig::load(a.config);
  if (a.layers_given) c.num_layers = a.layers;
  c.validate(a.config + "/config.json (benchmark)");
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void emit(const Json& j, const Args& a, bool root) {
  if (!root) return;
  const std::string line = j.dump();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  if (!a.out.empty()) {
    std::ofstream f(a.out, std::ios::app);
    f << line << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  const bool multi = a.mode != "single";
  DistEnv env;
  if (multi) env = dist_init(&argc, &argv);
  const bool root = env.world_rank == 0;
  try {
    if (!a.config.empty() && root) {  // read and checked before the device is looked for
      const WanTransformerConfig c = bench_config(a);
      std::printf("# %s: %d layers, dim %d, in_channels %d, image path %s\n", a.config.c_str(), c.num_layers, c.dim(),
                  c.in_channels, c.has_image() ? "yes" : "no");
    }
    if (cuda_device_count() == 0) {
      std::printf("# no CUDA device: nothing to measure\n");
      if (multi) dist_finalize();
      return 0;
    }
    ParallelConfig pc = parse_mesh(a.mode);
    pc.async_ulysses = a.async_ulysses;
    pc.dwdp_size = a.dwdp;
    VGEN_CHECK(pc.world_size() == env.world_size, ExitCode::kUsage,
               "--mode {} needs {} ranks (mpirun -np {}), this run has {}", a.mode, pc.world_size(), pc.world_size(),
               env.world_size);
    Mesh host_mesh = make_mesh(pc, env);
    std::shared_ptr<Mesh> mesh = device_mesh(host_mesh);  // selects this rank's GPU
    cudaDeviceProp prop{};
    VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, cuda_current_device()));

    WanDeviceOptions opt;
    opt.dtype = a.fp32 ? DType::kF32 : DType::kBF16;
    opt.fused_gelu = a.fused_gelu;
    opt.fused_residual_gemm = a.fused_residual;
    opt.dwdp_size = a.dwdp;
    opt.world = host_mesh.world;
    std::unique_ptr<WanTransformer> model;
    double load_seconds = -1;  // --model: the checkpoint's stream to the device
    if (a.model.empty()) {
      model = WanTransformer::random_on_device(bench_config(a), opt, 20261130);
    } else {  // streamed to the device as vgen run loads it (dist/weight_stream.h; no host copy)
      const std::string dir = (std::filesystem::path(a.model) / "transformer").string();
      WeightStore store = WeightStore::open(dir);
      WeightStream stream(nullptr, nullptr, WeightStreamOptions::from_env());  // each rank reads alone
      const int c = stream.add_component("transformer", store);
      const auto t0 = std::chrono::steady_clock::now();
      model = WanTransformer::stream_to_device(dir, stream, c, opt);
      stream.run();
      load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    // The key split as a run reads it (VGEN_ATTN_KV_CHUNK, VGEN_ATTN_TAIL).
    model->set_attention({parse_attention_backend(a.attention), attention_key_split_from_env()});
    const WanTransformerConfig& cfg = model->config();
    const int layers = cfg.num_layers;
    if (!a.fp8.empty())  // every forward in fp8; the bf16 weights of the quantised linears are freed
      model->enable_fp8({a.fp8 != "gemm", a.fp8 != "attention", false, a.fp8_qk == "int8",
                         a.fp8_gemm == "int8" ? GemmFormat::kInt8 : GemmFormat::kE4m3});
    auto attention = make_seq_attention(*mesh, AttentionConfig{});
    const WanDeviceModel& dm = *model->device_model();
    if (root)
      std::printf("# %s, %s, %d layers, %.2f GiB of weights, mode %s (%d rank%s), dwdp %d, commit %s\n", prop.name,
                  a.fp8.empty() ? (a.fp32 ? "fp32" : "bf16") : ("fp8 " + a.fp8).c_str(), layers, double(dm.weight_bytes()) / 1073741824.0, a.mode.c_str(),
                  env.world_size, env.world_size > 1 ? "s" : "", a.dwdp, git_describe().c_str());
    if (root && load_seconds >= 0) std::printf("# %s streamed to the device in %.1f s\n", a.model.c_str(), load_seconds);

    for (const std::string& shape_name : a.shapes) {
      const VideoShape vs = parse_shape(shape_name);
      const int64_t T = (vs.frames - 1) / 4 + 1, Hl = vs.height / 8, Wl = vs.width / 8, L = 512;
      const int64_t S = model->num_tokens({1, cfg.in_channels, T, Hl, Wl});
      // Random inputs on the device (never zeros); CFG ranks get different text, like the two streams.
      Tensor x = Tensor::empty({1, cfg.in_channels, T, Hl, Wl}, DType::kF32, Device::kCUDA);
      cuda_fill_normal(x, 1, 0.0f, 1.0f);
      Tensor ctx = Tensor::empty({1, L, cfg.text_dim}, DType::kBF16, Device::kCUDA);
      cuda_fill_normal(ctx, 2 + uint64_t(host_mesh.coord.cfg), 0.0f, 1.0f);
      // The image path: CLIP tokens through the image embedder and the image K/V in every forward.
      const int64_t Li = cfg.has_image() ? int64_t(cfg.pos_embed_seq_len.value_or(a.image_tokens)) : 0;
      Tensor img;
      if (Li > 0) {
        img = Tensor::empty({1, Li, int64_t(*cfg.image_dim)}, DType::kBF16, Device::kCUDA);  // [1, Li, I]
        cuda_fill_normal(img, 4, 0.0f, 1.0f);
      }
      // --cfg-step without cfg parallelism: the second stream runs after the first on every rank.
      const bool two_streams = a.cfg_step && pc.cfg_size == 1;
      Tensor ctx_uncond;
      if (two_streams) {
        ctx_uncond = Tensor::empty({1, L, cfg.text_dim}, DType::kBF16, Device::kCUDA);
        cuda_fill_normal(ctx_uncond, 3, 0.0f, 1.0f);
      }
      const int forwards = pc.cfg_size > 1 ? pc.cfg_size : (two_streams ? 2 : 1);  // per measurement
      Tensor t = Tensor::from_vector({a.timestep}, {1}).to(Device::kCUDA);
      Communicator& seq = *mesh->seq;
      const SeqLayout layout = SeqLayout::make(S, seq.size(), seq.rank());

      // One forward as the peer measures it: text embedding + K/V, blocks, head, gathered tokens,
      // unpatchified prediction (on the device). CFG mode adds the exchange of the two predictions.
      FirstBlockCache* cache = nullptr;  // set for the --first-block-cache forwards only
      auto forward_stream = [&](const Tensor& c) {
        TextContext text = model->prepare_text(c, img);
        Tensor local = model->forward_local(x, t, text, layout, *attention, cache);
        Tensor tokens = seq.size() == 1 && layout.padded == S ? local : gather_seq_tokens(seq, local, layout);
        return model->unpatchify(tokens, T, Hl, Wl);  // [1, 16, T, Hl, Wl] f32 (device)
      };
      auto forward = [&]() {
        Tensor pred = forward_stream(ctx);
        if (two_streams) {
          Tensor uncond = forward_stream(ctx_uncond);
        } else if (pc.cfg_size > 1) {
          Tensor host = pred.to(Device::kCPU);
          Tensor both = Tensor::empty({2, host.numel()}, DType::kF32);
          host_mesh.cfg->all_gather(host, both);
        }
        return pred;
      };
      double host_enqueue = 0;  // host seconds of the last fn() (returns before the GPU finishes)
      auto timed = [&](const std::function<void()>& fn) {
        host_mesh.world->barrier();
        CudaEventTimer tm;
        tm.start();
        const auto h0 = std::chrono::steady_clock::now();
        fn();
        host_enqueue = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
        tm.stop();
        Tensor s = Tensor::from_vector({float(tm.seconds())}, {1});
        host_mesh.world->all_reduce_max(s);  // the slowest rank sets the time
        return double(s.f32()[0]);
      };

      DeviceAllocator::instance().reset_peak();
      for (int i = 0; i < a.warmup; ++i) timed([&] { forward(); });
      std::vector<double> secs, text_secs;
      Tensor pred;  // the last timed forward's prediction, checked below
      std::vector<double> host_secs;  // far below secs: the host queues ahead and never starves the GPU
      for (int i = 0; i < a.reps; ++i) {
        secs.push_back(timed([&] { pred = forward(); }));
        host_secs.push_back(host_enqueue);
      }
      for (int i = 0; i < a.reps; ++i) text_secs.push_back(timed([&] { model->prepare_text(ctx, img); }));
      const DeviceAllocatorStats mem = DeviceAllocator::instance().stats();
      Tensor hpred = pred.to(Device::kCPU);
      double sumsq = 0;
      bool finite = true;
      for (int64_t i = 0; i < hpred.numel(); ++i) {
        const float v = hpred.f32()[i];
        finite = finite && std::isfinite(v);
        sumsq += double(v) * v;
      }

      const Flops fl = count_flops(cfg, double(S), double(L), double(Li));
      const double sec = median(secs);
      // FLOPs per rank in one forward() call: the sequence ranks share a stream's forward, and
      // --cfg-step without cfg parallelism runs two streams in it.
      const double share = double(two_streams ? 2 : 1) / double(seq.size());
      Json j;
      j["bench"] = "dit_forward";
      j["impl"] = "vgen";
      j["date"] = utc_now();
      j["gpu"] = prop.name;
      j["commit"] = git_describe();
      j["mode"] = a.mode;
      j["ranks"] = env.world_size;
      j["dtype"] = a.fp32 ? "fp32" : "bf16";
      j["precision"] = a.fp8.empty() ? (a.fp32 ? "fp32" : "bf16") : "fp8";
      if (!a.fp8.empty()) j["fp8"] = a.fp8;  // all | attention | gemm
      if (!a.fp8.empty() && a.fp8 != "gemm") j["fp8_qk"] = a.fp8_qk;
      if (!a.fp8.empty() && a.fp8 != "attention") j["fp8_gemm"] = a.fp8_gemm;
      j["fused_gelu"] = a.fused_gelu;
      j["fused_residual_gemm"] = a.fused_residual;
      j["async_ulysses"] = a.async_ulysses;
      j["dwdp_size"] = a.dwdp;
      j["height"] = vs.height, j["width"] = vs.width, j["frames"] = vs.frames;
      j["tokens"] = S, j["layers"] = layers;
      if (!a.model.empty()) j["model"] = a.model, j["load_seconds"] = load_seconds;
      if (!a.config.empty()) j["config"] = a.config;
      j["variant"] = cfg.has_image() ? "i2v" : "t2v";
      j["in_channels"] = cfg.in_channels;
      j["image_tokens"] = Li;
      j["timestep"] = a.timestep;
      j["seconds"] = sec;
      j["seconds_all"] = secs;
      j["mesh"] = {{"cfg", pc.cfg_size}, {"ulysses", pc.ulysses_size}, {"ring", pc.ring_size},
                   {"attn2d", {pc.attn2d_size[0], pc.attn2d_size[1]}}};
      j["cfg_step"] = forwards == 2;
      j["forwards_per_measurement"] = forwards;  // 2: both CFG streams in one measurement
      j["text_prepare_seconds"] = median(text_secs);
      j["host_enqueue_seconds"] = median(host_secs);
      j["tflops_total"] = fl.total() * forwards / sec / 1e12;
      j["flops"] = {{"gemm", fl.gemm}, {"self_attention", fl.self_attn}, {"cross_attention", fl.cross_attn}};
      {  // GEMMs whose bias/activation ran in the separate kernel (a fused epilogue was not offered)
        const kern::GemmCacheStats gs = kern::gemm_cache_stats();
        j["gemm_calls"] = gs.hits + gs.misses;
        j["gemm_unfused"] = gs.unfused;
      }
      j["peak_mem_gib"] = double(mem.peak_in_use_bytes) / 1073741824.0;
      j["peak_reserved_gib"] = double(mem.peak_reserved_bytes) / 1073741824.0;
      j["output_finite"] = finite;
      j["output_rms"] = std::sqrt(sumsq / double(std::max<int64_t>(1, hpred.numel())));
      if (!a.tag.empty()) j["tag"] = a.tag;
      j["attention"] = a.attention;

      if (a.first_block_cache) {
        FirstBlockCache fbc(std::numeric_limits<double>::infinity());  // every decision after the first cuts
        fbc.set_group(&seq);
        cache = &fbc;
        const double fill = timed([&] { pred = forward(); });
        std::vector<double> hit;
        for (int i = 0; i < std::max(a.reps, 3); ++i) hit.push_back(timed([&] { pred = forward(); }));
        cache = nullptr;
        Tensor hp = pred.to(Device::kCPU);
        for (int64_t i = 0; i < hp.numel(); ++i)
          VGEN_CHECK(std::isfinite(hp.f32()[i]), ExitCode::kInternal, "a cut {} forward produced non-finite values",
                     shape_name);
        VGEN_CHECK(fbc.hits() == int64_t(hit.size()), ExitCode::kInternal, "first-block cache: {} hits of {} forwards",
                   fbc.hits(), hit.size());
        j["first_block_cache"] = {{"fill_seconds", fill}, {"hit_seconds", median(hit)}, {"hits", fbc.hits()}};
        if (root)
          std::printf("# %s: first-block cache fill %.3f s, cut forward %.3f s (median of %zu)\n", shape_name.c_str(),
                      fill, median(hit), hit.size());
      }
      if (a.profile) {  // one more forward with every op bracketed by events
        DitPhaseProfiler prof;
        dm.set_profiler(&prof);
        forward();
        dm.set_profiler(nullptr);
        sync_compute_stream();
        const double g = prof.seconds(DitPhaseProfiler::kGemm), sa = prof.seconds(DitPhaseProfiler::kSelfAttention),
                     ca = prof.seconds(DitPhaseProfiler::kCrossAttention), o = prof.seconds(DitPhaseProfiler::kOther);
        j["phases_seconds"] = {{"gemm", g}, {"self_attention", sa}, {"cross_attention", ca}, {"other", o}};
        // Per rank: the sequence ranks share the work of one forward.
        j["gemm_tflops"] = fl.gemm * share / g / 1e12;
        j["self_attention_tflops"] = fl.self_attn * share / sa / 1e12;
        j["cross_attention_tflops"] = fl.cross_attn * share / ca / 1e12;
        if (root)
          std::printf("# %s: phases gemm %.3f s (%.0f TFLOP/s), self-attn %.3f s (%.0f TFLOP/s%s), cross-attn %.3f s, "
                      "other %.3f s\n",
                      shape_name.c_str(), g, double(j["gemm_tflops"]), sa, double(j["self_attention_tflops"]),
                      seq.size() > 1 ? ", incl. communication" : "", ca, o);
      }
      if (root)
        std::printf("# %s (%lld tokens): %.3f s per forward%s (median of %d), text %.3f s, peak %.1f GiB\n",
                    shape_name.c_str(), (long long)S, sec, forwards == 2 ? " pair (CFG step)" : "", a.reps,
                    median(text_secs), double(j["peak_mem_gib"]));
      emit(j, a, root);
      VGEN_CHECK(finite, ExitCode::kInternal, "the {} forward produced non-finite values", shape_name);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "vgen_dit_bench: %s\n", e.what());
    if (multi) dist_abort(int(e.code()));
    return int(e.code());
  }
  if (multi) dist_finalize();
  return 0;
}
