// GPU kernel timings at Wan shapes (label bench, never gates): the flash attention kernel and the
// cuBLASLt GEMMs of one DiT block, median of CUDA-event timings after warm-up, on random data.
// Usage: cuda_kernels_bench [--quick]   (--quick: the 480p token count only, fewer repetitions)
// Prints one line per case: name, shape, median ms, TFLOP/s.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_memory.h"
#include "core/tensor.h"
#include "kernels/attention/attention.cuh"
#include "kernels/common/convert.cuh"
#include "kernels/gemm/gemm.cuh"

using namespace vgen;

namespace {

Tensor random_bf16(const Shape& s, uint64_t seed, float amp = 1.0f) {
  Tensor t = Tensor::empty(s, DType::kBF16, Device::kCUDA);
  VGEN_CUDA_CHECK(kern::fill_uniform(t.raw(), kern::FloatType::kBF16, t.numel(), seed, -amp, amp, compute_stream()));
  return t;
}

double median_ms(const std::function<void()>& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  CudaEventTimer t;
  for (int i = 0; i < reps; ++i) {
    t.start();
    fn();
    t.stop();
    ms.push_back(t.seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void report(const std::string& name, const std::string& shape, double ms, double flop) {
  std::printf("%-28s %-34s %10.3f ms %9.1f TFLOP/s\n", name.c_str(), shape.c_str(), ms, flop / (ms * 1e-3) / 1e12);
  std::fflush(stdout);
}

void bench_attention(int64_t S, int64_t H, int64_t D, bool out_f32, int warmup, int reps) {
  Tensor q = random_bf16({1, S, H, D}, 1, 2.0f), k = random_bf16({1, S, H, D}, 2, 2.0f), v = random_bf16({1, S, H, D}, 3);
  Tensor o = Tensor::empty({1, S, H, D}, out_f32 ? DType::kF32 : DType::kBF16, Device::kCUDA);
  Tensor lse = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA);
  kern::AttnArgs a;
  a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = o.raw(), a.lse = lse.f32();
  a.B = 1, a.Sq = S, a.Skv = S, a.H = H, a.D = D, a.num_valid_kv = S, a.scale = 1.0f / std::sqrt(float(D));
  const double ms = median_ms(
      [&] {
        VGEN_CUDA_CHECK(kern::attention_fwd_bf16(a, out_f32 ? kern::AttnOut::kF32 : kern::AttnOut::kBF16,
                                                 compute_stream()));
      },
      warmup, reps);
  char shape[96];
  std::snprintf(shape, sizeof(shape), "S=%ld H=%ld D=%ld", long(S), long(H), long(D));
  report(out_f32 ? "flash_attention (f32 out)" : "flash_attention", shape, ms, 4.0 * double(S) * double(S) * H * D);
}

void bench_gemm(const char* name, int64_t M, int64_t N, int64_t K, bool bias, bool gelu, int warmup, int reps) {
  Tensor x = random_bf16({M, K}, 4), w = random_bf16({N, K}, 5, 0.05f), b = random_bf16({N}, 6);
  Tensor y = Tensor::empty({M, N}, DType::kBF16, Device::kCUDA);
  kern::LinearArgs a;
  a.x = x.raw(), a.w = w.raw(), a.y = y.raw();
  a.bias = bias ? b.raw() : nullptr;
  a.M = M, a.N = N, a.K = K;
  a.act = gelu ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;
  const double ms = median_ms(
      [&] {
        cudaError_t e = kern::linear(a, compute_stream());
        if (e != cudaSuccess) VGEN_THROW(ExitCode::kInternal, "linear: {}", kern::gemm_last_error());
      },
      warmup, reps);
  char shape[96];
  std::snprintf(shape, sizeof(shape), "M=%ld N=%ld K=%ld", long(M), long(N), long(K));
  report(name, shape, ms, 2.0 * double(M) * N * K);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (cuda_device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int warmup = 2, reps = quick ? 3 : 7;
  // 480x832x81 -> 32,760 tokens; 720x1280x81 -> 75,600 tokens (Wan2.1-14B: 40 heads x 128, D 5120, FFN 13824).
  std::vector<int64_t> tokens = {32760};
  if (!quick) tokens.push_back(75600);
  for (int64_t S : tokens) {
    bench_attention(S, 40, 128, false, warmup, reps);
    bench_attention(S, 40, 128, true, warmup, reps);
  }
  bench_attention(16384, 16, 128, false, warmup, reps);
  bench_attention(32760, 12, 64, false, warmup, reps);
  const int64_t M = 32760;
  bench_gemm("gemm qkv-proj (+bias)", M, 5120, 5120, true, false, warmup, reps);
  bench_gemm("gemm ffn1 (+bias+gelu)", M, 13824, 5120, true, true, warmup, reps);
  bench_gemm("gemm ffn2 (+bias)", M, 5120, 13824, true, false, warmup, reps);
  bench_gemm("gemm 8192^3", 8192, 8192, 8192, false, false, warmup, reps);
  kern::gemm_set_fused_epilogue(false);
  bench_gemm("gemm ffn1 unfused epilogue", M, 13824, 5120, true, true, warmup, reps);
  kern::gemm_set_fused_epilogue(true);
  const kern::GemmCacheStats gs = kern::gemm_cache_stats();
  std::printf("gemm plans %lu, unfused calls %lu; device peak %.1f MiB\n", (unsigned long)gs.plans,
              (unsigned long)gs.unfused, double(device_peak_bytes()) / (1 << 20));
  return 0;
}
