// VAE decode memory and time on the CPU: peak RSS of one decode of T latent frames, in a fresh
// process per measurement (ru_maxrss is a process high-water mark).
// Usage: vae_memory_bench VAE_DIR T H W [stream|full]
//   stream: decode_stream with a sink that drops the frames (activations + caches only);
//   full:   decode() into the whole output video.
// Prints one JSON line: {"T", "H", "W", "mode", "frames", "rss_before_mib", "rss_peak_mib",
// "output_mib", "seconds"}.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "model/wan/vae/vae_decoder.h"

using namespace vgen;

static double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s VAE_DIR T H W [stream|full]\n", argv[0]);
    return 2;
  }
  try {
    const std::string dir = argv[1];
    const int64_t T = std::stoll(argv[2]), H = std::stoll(argv[3]), W = std::stoll(argv[4]);
    const std::string mode = argc > 5 ? argv[5] : "stream";
    WanVaeDecoder dec = WanVaeDecoder::load(dir);
    const WanVaeConfig& cfg = dec.config();
    std::mt19937 g(0);
    std::normal_distribution<float> d;
    std::vector<float> v(size_t(cfg.z_dim * T * H * W));
    for (auto& x : v) x = d(g);
    Tensor z = Tensor::from_vector(v, {1, cfg.z_dim, T, H, W});
    const double before = peak_rss_mib();
    auto t0 = std::chrono::steady_clock::now();
    int64_t frames = 0;
    double out_mib = 0;
    if (mode == "full") {
      Tensor video = dec.decode(z);
      frames = video.dim(2);
      out_mib = double(video.nbytes()) / (1 << 20);
    } else {
      LocalSpatialContext ctx;
      dec.decode_stream(z[0], ctx, [&](const Tensor& y, int64_t) { frames += y.dim(1); });
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "{\"T\": %lld, \"H\": %lld, \"W\": %lld, \"mode\": \"%s\", \"frames\": %lld, \"rss_before_mib\": %.1f, "
        "\"rss_peak_mib\": %.1f, \"output_mib\": %.1f, \"seconds\": %.2f}\n",
        (long long)T, (long long)H, (long long)W, mode.c_str(), (long long)frames, before, peak_rss_mib(), out_mib,
        secs);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "vae_memory_bench: %s\n", e.message().c_str());
    return int(e.code());
  }
}
