// Wan 2.1 VAE decode on the GPU (label bench, never gates; CUDA builds only): the real decoder
// config (base_dim 96, z_dim 16, dim_mult [1,2,4,4], 2 res blocks) with random weights N(0, 0.02²)
// (the diffusers peer benchmark's init), random N(0, 1) latents, decode() of 81 frames at
// 480×832 (latent 21×60×104) and 720×1280 (21×90×160). One warm-up decode (builds the cuDNN plans),
// then the median of --reps CUDA-event timings; the peak of the caching allocator's live bytes over
// one decode (weights, latents and the f32 output video included, like torch's
// max_memory_allocated for the peer) and its reserved bytes. The output is checked finite and
// non-zero. One JSON line per shape (stdout, and appended to --out).
// Under mpirun with N > 1 ranks it measures the parallel VAE (parallel_vae_size = N): every rank
// builds the same random decoder and latents, the frame is split along --split-dim (default: the
// recipe's) and parallel_vae_decode runs over NCCL; each time is the slowest rank's (world
// barrier, CUDA events, max over the ranks) and rank 0 prints; rank 0 then decodes the same latents
// alone and compares (JSON vs_one_rank; exit 1 above the golden vae_decode tolerance).
// --conv-profile (single GPU only) adds, per shape, one line per distinct conv of the decoder (the
// causal convs as called: 2 cached frames + 1 new one) with its time on the selected backend, its
// call count per decode and TFLOP/s, and the estimated conv total, so a slow layer shows.
// --config DIR: the VAE of DIR/config.json (random weights of its shapes) instead of the Wan 2.1
// defaults, e.g. recipes/models/wan2.2-ti2v-5b/vae (the Wan 2.2 VAE: z 48, residual up blocks,
// patch 2, 16 pixels per latent position); the latents are [z_dim, (F−1)/scale_factor_temporal + 1,
// H/scale_factor_spatial, W/scale_factor_spatial] of the config. Shapes: 480p (480×832), 720p
// (720×1280), both with --frames, or HxWxF (e.g. 704x1280x121). The peer is
// scripts/bench/peer/diffusers_i2v_bench.py vae22 (gpu_suite.sh vae22).
// Usage: vgen_vae_bench [--shapes 480p,720p|HxWxF,...] [--dtype bf16|fp32] [--reps 3] [--frames 81]
//                       [--config DIR] [--cache-copy] [--backend auto|cudnn|gemm] [--autotune]
//                       [--conv-profile] [--out FILE] [--tag TAG]
//        mpirun -np N vgen_vae_bench [--split-dim width|height] ...   (N GPUs, parallel_vae_size N)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_allocator.h"
#include "core/error.h"
#include "core/json.h"
#include "dist/bootstrap.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_parallel.h"
#include "ops/dit_device_ops.h"
#include "ops/vae_device_ops.h"

using namespace vgen;

namespace {

struct Args {
  std::vector<std::string> shapes = {"480p", "720p"};
  std::string dtype = "bf16", backend = "auto", out, tag;
  std::string config;  // a VAE directory (config.json); empty: the Wan 2.1 defaults  // tag: "single" or "parallel_vae_N" unless given
  std::string split_dim = vae_split_dim_name(ParallelConfig{}.parallel_vae_split_dim);  // the recipe default
  int reps = 3, frames = 81;
  bool cache_copy = false, autotune = false, conv_profile = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) r.push_back(x);
  return r;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "vgen_vae_bench: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--shapes") a.shapes = split(val());
    else if (k == "--dtype") a.dtype = val();
    else if (k == "--reps") a.reps = std::stoi(val());
    else if (k == "--frames") a.frames = std::stoi(val());
    else if (k == "--backend") a.backend = val();
    else if (k == "--config") a.config = val();
    else if (k == "--out") a.out = val();
    else if (k == "--tag") a.tag = val();
    else if (k == "--split-dim") a.split_dim = val();
    else if (k == "--cache-copy") a.cache_copy = true;
    else if (k == "--autotune") a.autotune = true;
    else if (k == "--conv-profile") a.conv_profile = true;
    else {
      std::fprintf(stderr, "vgen_vae_bench: unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (a.split_dim != "width" && a.split_dim != "height") {
    std::fprintf(stderr, "vgen_vae_bench: --split-dim must be width or height, got %s\n", a.split_dim.c_str());
    std::exit(2);
  }
  return a;
}

struct VideoSize {
  int64_t height, width, frames;
};
// 480p / 720p with `frames`, or HxWxF; exits 2 on anything else.
VideoSize parse_shape(const std::string& s, int frames) {
  if (s == "480p") return {480, 832, frames};
  if (s == "720p") return {720, 1280, frames};
  long long h = 0, w = 0, f = 0;
  char end = 0;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld%c", &h, &w, &f, &end) != 3 || h < 1 || w < 1 || f < 1) {
    std::fprintf(stderr, "vgen_vae_bench: bad shape %s (480p, 720p or HxWxF)\n", s.c_str());
    std::exit(2);
  }
  return {h, w, f};
}

// The slowest rank's seconds (f32 through the reduction); one rank keeps its double unchanged.
double slowest(Communicator& world, double s) {
  if (world.size() == 1) return s;
  Tensor t = Tensor::from_vector({float(s)}, {1});
  world.all_reduce_max(t);
  return double(t.f32()[0]);
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// The decoder's distinct convs at latent size h × w for T latent frames (wan_spec §5.3): input
// frames per call (kt − 1 cached + 1), spatial size, channels, kernel, calls per decode.
struct ConvShape {
  const char* what;
  int64_t Ti, H, W, Cin, Cout, kt, k, calls;
};
std::vector<ConvShape> decoder_convs(const WanVaeConfig& cfg, int64_t T, int64_t h, int64_t w) {
  const std::vector<int> d = cfg.decoder_dims();  // [d0, ..., dn]
  const std::vector<bool> tup = cfg.temperal_upsample();
  const int nb = cfg.num_up_blocks(), nr = cfg.num_res_blocks + 1;
  std::vector<ConvShape> v;
  int64_t frames = T, H = h, W = w;
  v.push_back({"conv_in", 3, H, W, cfg.z_dim, d[0], 3, 3, frames});
  v.push_back({"mid res", 3, H, W, d[0], d[0], 3, 3, 4 * frames});
  for (int i = 0; i < nb; ++i) {
    const int64_t in = cfg.up_block_in(i), out = d[size_t(i) + 1];
    if (in != out) {
      v.push_back({"res conv1 (in != out)", 3, H, W, in, out, 3, 3, frames});
      v.push_back({"res out x out", 3, H, W, out, out, 3, 3, (2 * nr - 1) * frames});
    } else {
      v.push_back({"res out x out", 3, H, W, out, out, 3, 3, 2 * nr * frames});
    }
    if (i == nb - 1) {
      v.push_back({"conv_out", 3, H, W, out, (cfg.out_channels + 7) / 8 * 8, 3, 3, frames});
      break;
    }
    if (tup[size_t(i)]) {
      v.push_back({"time_conv", 3, H, W, out, 2 * out, 3, 1, frames - 1});
      frames = 1 + 2 * (frames - 1);
    }
    // The upsampler's sub-pixel 2×2 conv of the low-resolution frame (ops/vae_subpixel_ops.h).
    v.push_back({"resample (sub-pixel)", 1, H, W, out, 4 * cfg.upsampler_out(i), 1, 2, frames});
    H *= 2, W *= 2;
  }
  return v;
}

// Times each conv (1 warm-up + 5 runs, median) on random data; returns the estimated conv seconds
// of one decode.
double conv_profile(const WanVaeConfig& cfg, DType dt, const VaeConvPolicy& conv, int64_t T, int64_t h, int64_t w,
                    const std::string& shape, const Args& args) {
  double total = 0;
  uint64_t seed = 99;
  for (const ConvShape& c : decoder_convs(cfg, T, h, w)) {
    Tensor x = Tensor::empty({c.Ti, c.H, c.W, c.Cin}, dt, Device::kCUDA);
    Tensor wt = Tensor::empty({c.Cout, c.kt, c.k, c.k, c.Cin}, dt, Device::kCUDA);
    Tensor b = Tensor::empty({c.Cout}, DType::kF32, Device::kCUDA);
    cuda_fill_normal(x, seed++, 0.0f, 1.0f);
    cuda_fill_normal(wt, seed++, 0.0f, 0.02f);
    cuda_fill_normal(b, seed++, 0.0f, 0.02f);
    const int64_t p = c.k == 2 ? 1 : (c.k - 1) / 2;  // the sub-pixel 2×2 conv reads one pixel each side
    const kern::Conv3dPad pad{p, p, p, p};
    const VaeConvCounts c0 = vae_conv_counts();
    { Tensor y = cuda_vae_conv3d(x, wt, b, pad, conv); }
    const bool cudnn = vae_conv_counts().cudnn > c0.cudnn;
    std::vector<double> ms;
    CudaEventTimer timer;
    for (int r = 0; r < 5; ++r) {
      timer.start();
      Tensor y = cuda_vae_conv3d(x, wt, b, pad, conv);
      timer.stop();
      ms.push_back(timer.seconds() * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    const double m = ms[2];
    const double flops = 2.0 * double(c.H * c.W) * double(c.Cout) * double(c.Cin * c.kt * c.k * c.k) * double(c.Ti - c.kt + 1);
    total += m * 1e-3 * double(c.calls);
    Json j;
    j["bench"] = "vae_conv";
    j["tag"] = args.tag;
    j["shape"] = shape;
    j["conv"] = c.what;
    j["input"] = {c.Ti, c.H, c.W, c.Cin};
    j["cout"] = c.Cout;
    j["kernel"] = {c.kt, c.k, c.k};
    j["dtype"] = dtype_name(dt);
    j["backend"] = cudnn ? "cudnn" : "gemm";
    j["ms"] = m;
    j["tflops"] = flops / (m * 1e-3) / 1e12;
    j["calls_per_decode"] = c.calls;
    j["seconds_per_decode"] = m * 1e-3 * double(c.calls);
    std::printf("%s\n", j.dump().c_str());
    std::printf("#   conv %-22s %5lldx%-5lld %4lld->%-4lld k%lldx%lldx%lld %-5s %8.3f ms %7.1f TFLOP/s x%-4lld = %.3f s\n",
                c.what, (long long)c.H, (long long)c.W, (long long)c.Cin, (long long)c.Cout, (long long)c.kt,
                (long long)c.k, (long long)c.k, cudnn ? "cudnn" : "gemm", m, flops / (m * 1e-3) / 1e12,
                (long long)c.calls, m * 1e-3 * double(c.calls));
    if (!args.out.empty()) std::ofstream(args.out, std::ios::app) << j.dump() << "\n";
  }
  std::printf("#   conv total (estimate) %s: %.3f s per decode\n", shape.c_str(), total);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  DistEnv env;
  try {
    env = dist_init(&argc, &argv);  // as vgen does: one process without mpirun is a world of one
  } catch (const Error& e) {
    std::fprintf(stderr, "vgen_vae_bench: %s\n", e.what());
    return int(e.code());
  }
  const bool multi = env.world_size > 1, root = env.world_rank == 0;
  if (args.tag.empty()) args.tag = multi ? "parallel_vae_" + std::to_string(env.world_size) : "single";
  try {
    // The constructor defaults are the Wan 2.1 VAE (wan_spec §5.1); --config reads another. The
    // config and the shapes are checked before the device is looked for (a CPU checks them too).
    const WanVaeConfig cfg = args.config.empty() ? WanVaeConfig{} : load_wan_vae_config(args.config);
    for (const std::string& shape : args.shapes) {
      const VideoSize vs = parse_shape(shape, args.frames);
      const int64_t sf = cfg.scale_factor_spatial, T = (vs.frames - 1) / cfg.scale_factor_temporal + 1;
      VGEN_CHECK(vs.height % sf == 0 && vs.width % sf == 0, ExitCode::kUsage,
                 "shape {}: {}x{} is no multiple of the VAE's {} pixels per latent position", shape, vs.height,
                 vs.width, sf);
      if (root)
        std::printf("# shape %s: latents [%d, %lld, %lld, %lld] -> %lld frames\n", shape.c_str(), cfg.z_dim,
                    (long long)T, (long long)(vs.height / sf), (long long)(vs.width / sf),
                    (long long)cfg.output_frames(T));
    }
    if (cuda_device_count() == 0) {
      if (root) std::printf("[  SKIPPED ] vgen_vae_bench: no CUDA device\n");  // ctest reports a skip
      dist_finalize();
      return 0;
    }
    VGEN_CHECK(!(multi && args.conv_profile), ExitCode::kUsage,
               "--conv-profile times the single-GPU convs; run it without mpirun");
    // The VAE group is ranks 0..P-1 of the cfg-0 group, so the sequence axis (ulysses here; the
    // DiT is not built) spans the world to let P = N.
    ParallelConfig pc;
    pc.ulysses_size = pc.parallel_vae_size = env.world_size;
    pc.parallel_vae_split_dim = args.split_dim == "height" ? VaeSplitDim::kHeight : VaeSplitDim::kWidth;
    Mesh host_mesh = make_mesh(pc, env);  // self communicators for one rank
    Communicator& world = *host_mesh.world;
    // NCCL over the VAE group (= the world), as the pipeline builds it; selects this rank's GPU.
    // Only the VAE group is needed, so no device_mesh (its sequence NCCL groups would sit idle).
    std::shared_ptr<Communicator> vae;
    if (multi) vae = device_vae_communicator(host_mesh);
    const VaeSplitDim split = pc.parallel_vae_split_dim;
    cudaDeviceProp prop{};
    VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, cuda_current_device()));
    const char* commit = std::getenv("VGEN_COMMIT");

    WanVaeOptions opt;
    opt.device = Device::kCUDA;
    opt.dtype = args.dtype == "fp32" ? DType::kF32 : DType::kBF16;
    opt.cache_copy = args.cache_copy;
    opt.conv.backend = args.backend == "gemm"    ? VaeConvBackend::kGemm
                       : args.backend == "cudnn" ? VaeConvBackend::kCudnn
                                                 : VaeConvBackend::kAuto;
    opt.conv.autotune = args.autotune;
    auto dec = WanVaeDecoder::random(cfg, opt, 1234);  // same seed, same weights on every rank
    sync_compute_stream();
    // Every rank of the group ends with the full video (the output is all-gathered).
    auto decode = [&](const Tensor& z) {
      return multi ? parallel_vae_decode(*dec, z, *vae, split) : dec->decode(z);  // [1, 3, F, H, W] f32
    };

    for (const std::string& shape : args.shapes) {
      const VideoSize vs = parse_shape(shape, args.frames);
      const int64_t H = vs.height, W = vs.width, sf = cfg.scale_factor_spatial;
      const int64_t T = (vs.frames - 1) / cfg.scale_factor_temporal + 1, h = H / sf, w = W / sf;
      std::mt19937 g{uint32_t(H)};  // same latents on every rank
      std::normal_distribution<float> nd;
      std::vector<float> zv(size_t(cfg.z_dim * T * h * w));
      for (auto& x : zv) x = nd(g);
      Tensor z = Tensor::from_vector(zv, {1, cfg.z_dim, T, h, w}).to(opt.dtype).to(Device::kCUDA);  // [1, Z, T, h, w]

      const VaeConvCounts c0 = vae_conv_counts();
      world.barrier();
      auto t_warm = std::chrono::steady_clock::now();
      { Tensor v = decode(z); }
      sync_compute_stream();
      const double warm_s =
          slowest(world, std::chrono::duration<double>(std::chrono::steady_clock::now() - t_warm).count());
      const VaeConvCounts c1 = vae_conv_counts();

      std::vector<double> secs;
      size_t peak_in_use = 0, peak_reserved = 0;
      Tensor video;  // [1, 3, F, H, W] f32 (device)
      CudaEventTimer timer;
      for (int r = 0; r < args.reps; ++r) {
        video = Tensor();
        sync_compute_stream();
        DeviceAllocator::instance().reset_peak();
        world.barrier();
        timer.start();
        video = decode(z);
        timer.stop();
        secs.push_back(slowest(world, timer.seconds()));  // the slowest rank sets the time
        // This rank's allocator; rank 0's is reported (the ranks decode equal parts, ±1 col/row).
        const DeviceAllocatorStats s = DeviceAllocator::instance().stats();
        peak_in_use = std::max(peak_in_use, s.peak_in_use_bytes);
        peak_reserved = std::max(peak_reserved, s.peak_reserved_bytes);
      }
      std::vector<double> sorted = secs;
      std::sort(sorted.begin(), sorted.end());
      const double med = sorted[sorted.size() / 2];
      size_t free_b = 0, total_b = 0;
      VGEN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));

      // Sanity of the output (not timed): finite, not all zero; checked on every rank (each holds
      // the full video), the ranks agree on the verdict.
      Tensor hv = video.to(Device::kCPU);
      int64_t bad = 0;
      double abs_sum = 0;
      for (int64_t i = 0; i < hv.numel(); ++i) {
        const float x = hv.f32()[i];
        if (!std::isfinite(x)) ++bad;
        else abs_sum += std::fabs(x);
      }
      // The parallel decode against one rank's decode of the same latents (rank 0, not timed): the
      // halo exchange checked at real size, where the golden fixtures are tiny. Fails above the
      // golden vae_decode tolerance (rel-L2 3e-2 bf16, 1e-4 fp32).
      double vs_rel = 0, vs_max = 0;
      bool mismatch = false;
      if (multi && root) {
        Tensor one = dec->decode(z).to(Device::kCPU);  // [1, 3, F, H, W] f32
        double num = 0, den = 0;
        for (int64_t i = 0; i < one.numel() && i < hv.numel(); ++i) {
          const double d = double(hv.f32()[i]) - one.f32()[i];
          num += d * d;
          den += double(one.f32()[i]) * one.f32()[i];
          vs_max = std::max(vs_max, std::fabs(d));
        }
        vs_rel = std::sqrt(num / std::max(den, 1e-30));
        mismatch = one.shape() != hv.shape() || !(vs_rel <= (opt.dtype == DType::kBF16 ? 3e-2 : 1e-4));
      }
      const bool any_bad = any_rank_failed(world, bad != 0 || mismatch);
      Json j;
      j["bench"] = "vae_decode";
      j["impl"] = "vgen";
      j["tag"] = args.tag;
      j["date"] = utc_now();
      j["gpu"] = prop.name;
      j["commit"] = commit ? commit : "unknown";
      j["ranks"] = env.world_size;
      j["parallel_vae_size"] = multi ? vae->size() : 1;
      j["split_dim"] = multi ? args.split_dim : "none";
      j["height"] = video.defined() ? video.dim(3) : H;  // the decoded video's size
      j["width"] = video.defined() ? video.dim(4) : W;
      j["frames"] = video.defined() ? video.dim(2) : cfg.output_frames(T);
      j["config"] = args.config.empty() ? "wan2.1 defaults" : args.config;
      j["is_residual"] = cfg.is_residual;
      j["latent"] = {cfg.z_dim, T, h, w};
      j["dtype"] = args.dtype;
      j["backend"] = args.backend;
      j["cache_copy"] = args.cache_copy;
      j["autotune"] = args.autotune;
      j["seconds"] = med;
      j["seconds_all"] = secs;
      j["warmup_seconds"] = warm_s;
      j["peak_bytes"] = peak_in_use;
      j["peak_gib"] = double(peak_in_use) / double(1ull << 30);
      j["peak_reserved_bytes"] = peak_reserved;
      j["device_used_bytes_after"] = total_b - free_b;
      j["weight_bytes"] = dec->weight_bytes();
      j["conv_calls_per_decode"] = {{"cudnn", c1.cudnn - c0.cudnn}, {"gemm", c1.gemm - c0.gemm}};
      j["cudnn_rejected_shapes"] = c1.cudnn_rejected_shapes;
      j["cudnn_unfused_bias_plans"] = c1.cudnn_unfused_bias;
      j["cudnn_unfused_residual_plans"] = c1.cudnn_unfused_residual;
      j["output_nonfinite"] = bad;
      if (multi) j["vs_one_rank"] = {{"rel_l2", vs_rel}, {"max_abs", vs_max}, {"mismatch", mismatch}};
      j["output_mean_abs"] = hv.numel() ? abs_sum / double(hv.numel()) : 0.0;
      if (root) {
        const std::string line = j.dump();
        std::printf("%s\n", line.c_str());
        std::printf("# vae %s %s%s%s: %.3f s (median of %d), peak %.2f GiB, warm-up %.1f s, conv calls cudnn %llu gemm "
                    "%llu%s\n",
                    shape.c_str(), args.dtype.c_str(), args.cache_copy ? " cache-copy" : "",
                    multi ? (" on " + std::to_string(env.world_size) + " GPUs split " + args.split_dim).c_str() : "",
                    med, args.reps, double(peak_in_use) / double(1ull << 30), warm_s,
                    (unsigned long long)(c1.cudnn - c0.cudnn), (unsigned long long)(c1.gemm - c0.gemm),
                    bad ? "  NON-FINITE OUTPUT" : mismatch ? "  DIFFERS FROM ONE RANK" : "");
        if (multi) std::printf("# vae %s parallel vs one rank: rel-L2 %.3e, max |diff| %.3e\n", shape.c_str(), vs_rel, vs_max);
        std::fflush(stdout);
        if (!args.out.empty()) std::ofstream(args.out, std::ios::app) << line << "\n";
      }
      video = Tensor();
      hv = Tensor();
      if (args.conv_profile) conv_profile(cfg, opt.dtype, opt.conv, T, h, w, shape, args);
      if (any_bad) {
        dist_finalize();
        return 1;
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "vgen_vae_bench: %s\n", e.message().c_str());
    if (multi) dist_abort(int(e.code()));
    dist_finalize();  // one rank: end MPI cleanly, then the error's code
    return int(e.code());
  }
  dist_finalize();
  return 0;
}
