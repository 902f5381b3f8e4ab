// Wan 2.1 VAE decode on the GPU (label bench, never gates; CUDA builds only): the real decoder
// config (base_dim 96, z_dim 16, dim_mult [1,2,4,4], 2 res blocks) with random weights N(0, 0.02²)
// (the diffusers peer benchmark's init), random N(0, 1) latents, decode() of 81 frames at
// 480×832 (latent 21×60×104) and 720×1280 (21×90×160). One warm-up decode (builds the cuDNN plans),
// then the median of --reps CUDA-event timings; the peak of the caching allocator's live bytes over
// one decode (weights, latents and the f32 output video included, like torch's
// max_memory_allocated for the peer) and its reserved bytes. The output is checked finite and
// non-zero. One JSON line per shape (stdout, and appended to --out).
// Usage: vgen_vae_bench [--shapes 480p,720p] [--dtype bf16|fp32] [--reps 3] [--frames 81]
//                       [--cache-copy] [--backend auto|cudnn|gemm] [--autotune] [--out FILE] [--tag TAG]
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
#include "core/json.h"
#include "model/wan/vae_device.h"
#include "ops/vae_device_ops.h"

using namespace vgen;

namespace {

struct Args {
  std::vector<std::string> shapes = {"480p", "720p"};
  std::string dtype = "bf16", backend = "auto", out, tag = "single";
  int reps = 3, frames = 81;
  bool cache_copy = false, autotune = false;
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
    else if (k == "--out") a.out = val();
    else if (k == "--tag") a.tag = val();
    else if (k == "--cache-copy") a.cache_copy = true;
    else if (k == "--autotune") a.autotune = true;
    else {
      std::fprintf(stderr, "vgen_vae_bench: unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    if (cuda_device_count() == 0) {
      std::fprintf(stderr, "vgen_vae_bench: no CUDA device\n");
      return 2;
    }
    cudaDeviceProp prop{};
    VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, cuda_current_device()));
    const char* commit = std::getenv("VGEN_COMMIT");
    set_vae_conv_backend(args.backend == "gemm" ? VaeConvBackend::kGemm
                         : args.backend == "cudnn" ? VaeConvBackend::kCudnn
                                                   : VaeConvBackend::kAuto);
    set_vae_conv_autotune(args.autotune);

    WanVaeConfig cfg;  // the constructor defaults are the Wan 2.1 VAE (wan_spec §5.1)
    VaeDeviceOptions opt;
    opt.dtype = args.dtype == "fp32" ? DType::kF32 : DType::kBF16;
    opt.cache_copy = args.cache_copy;
    auto dec = WanVaeDeviceDecoder::random(cfg, opt, 1234);
    sync_compute_stream();

    for (const std::string& shape : args.shapes) {
      const int64_t H = shape == "720p" ? 720 : 480, W = shape == "720p" ? 1280 : 832;
      const int64_t T = (args.frames - 1) / 4 + 1, h = H / 8, w = W / 8;
      std::mt19937 g(uint32_t(H));
      std::normal_distribution<float> nd;
      std::vector<float> zv(size_t(cfg.z_dim * T * h * w));
      for (auto& x : zv) x = nd(g);
      Tensor z = Tensor::from_vector(zv, {1, cfg.z_dim, T, h, w}).to(opt.dtype).to(Device::kCUDA);

      const VaeConvCounts c0 = vae_conv_counts();
      auto t_warm = std::chrono::steady_clock::now();
      { Tensor v = dec->decode(z); }
      sync_compute_stream();
      const double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_warm).count();
      const VaeConvCounts c1 = vae_conv_counts();

      std::vector<double> secs;
      size_t peak_in_use = 0, peak_reserved = 0;
      Tensor video;
      CudaEventTimer timer;
      for (int r = 0; r < args.reps; ++r) {
        video = Tensor();
        sync_compute_stream();
        DeviceAllocator::instance().reset_peak();
        timer.start();
        video = dec->decode(z);
        timer.stop();
        secs.push_back(timer.seconds());
        const DeviceAllocatorStats s = DeviceAllocator::instance().stats();
        peak_in_use = std::max(peak_in_use, s.peak_in_use_bytes);
        peak_reserved = std::max(peak_reserved, s.peak_reserved_bytes);
      }
      std::vector<double> sorted = secs;
      std::sort(sorted.begin(), sorted.end());
      const double med = sorted[sorted.size() / 2];
      size_t free_b = 0, total_b = 0;
      VGEN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));

      // Sanity of the output (not timed): finite, not all zero.
      Tensor hv = video.to(Device::kCPU);
      int64_t bad = 0;
      double abs_sum = 0;
      for (int64_t i = 0; i < hv.numel(); ++i) {
        const float x = hv.f32()[i];
        if (!std::isfinite(x)) ++bad;
        else abs_sum += std::fabs(x);
      }
      Json j;
      j["bench"] = "vae_decode";
      j["impl"] = "vgen";
      j["tag"] = args.tag;
      j["date"] = utc_now();
      j["gpu"] = prop.name;
      j["commit"] = commit ? commit : "unknown";
      j["height"] = H;
      j["width"] = W;
      j["frames"] = cfg.output_frames(T);
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
      j["output_nonfinite"] = bad;
      j["output_mean_abs"] = hv.numel() ? abs_sum / double(hv.numel()) : 0.0;
      const std::string line = j.dump();
      std::printf("%s\n", line.c_str());
      std::printf("# vae %s %s%s: %.3f s (median of %d), peak %.2f GiB, warm-up %.1f s, conv calls cudnn %llu gemm %llu%s\n",
                  shape.c_str(), args.dtype.c_str(), args.cache_copy ? " cache-copy" : "", med, args.reps,
                  double(peak_in_use) / double(1ull << 30), warm_s, (unsigned long long)(c1.cudnn - c0.cudnn),
                  (unsigned long long)(c1.gemm - c0.gemm), bad ? "  NON-FINITE OUTPUT" : "");
      std::fflush(stdout);
      if (!args.out.empty()) std::ofstream(args.out, std::ios::app) << line << "\n";
      video = Tensor();
      hv = Tensor();
      if (bad) return 1;
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "vgen_vae_bench: %s\n", e.message().c_str());
    return int(e.code());
  }
}
