// GPU kernel timings at Wan shapes (label bench, never gates): the flash attention kernel and the
// cuBLASLt GEMMs of one DiT block, median of CUDA-event timings after warm-up, on random data.
// Usage: cuda_kernels_bench [--quick | --dit-ops]   (--quick: the 480p token count only, fewer
// repetitions; --dit-ops: the memory-bound ops of one DiT block at 720p in GB/s and the Q/K/V
// projections as three GEMMs against one)
// Prints one line per case: name, shape, median ms, TFLOP/s (GB/s for the memory-bound ops).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cuda_stream.h"
#include "core/device_memory.h"
#include "core/tensor.h"
#include "kernels/attention/attention.cuh"
#include "kernels/common/convert.cuh"
#include "kernels/gemm/gemm.cuh"
#include "kernels/activation/activation.cuh"
#include "kernels/elementwise/elementwise.cuh"
#include "kernels/norm/norm.cuh"
#include "kernels/rope/rope.cuh"

using namespace vgen;

namespace {

using bench::median_ms;
using bench::random_bf16;

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

// One [M, N] GEMM as `parts` GEMMs over column blocks of the weight (output blocks at ldy = N):
// does a weight block that fits in L2 run faster per FLOP?
void bench_gemm_nsplit(const char* name, int64_t M, int64_t N, int64_t K, int parts, int warmup, int reps) {
  Tensor x = random_bf16({M, K}, 4), w = random_bf16({N, K}, 5, 0.05f), b = random_bf16({N}, 6);
  Tensor y = Tensor::empty({M, N}, DType::kBF16, Device::kCUDA);
  const int64_t step = (N / parts + 127) / 128 * 128;
  const double ms = median_ms(
      [&] {
        for (int64_t n0 = 0; n0 < N; n0 += step) {
          kern::LinearArgs a;
          a.x = x.raw(), a.M = M, a.K = K, a.N = std::min(step, N - n0);
          a.w = static_cast<const char*>(w.raw()) + n0 * K * 2;
          a.bias = static_cast<const char*>(b.raw()) + n0 * 2;
          a.y = static_cast<char*>(y.raw()) + n0 * 2;
          a.ldy = N;
          cudaError_t e = kern::linear(a, compute_stream());
          if (e != cudaSuccess) VGEN_THROW(ExitCode::kInternal, "linear: {}", kern::gemm_last_error());
        }
      },
      warmup, reps);
  char shape[96];
  std::snprintf(shape, sizeof(shape), "M=%ld N=%ld K=%ld /%d", long(M), long(N), long(K), parts);
  report(name, shape, ms, 2.0 * double(M) * N * K);
}

Tensor random_f32(const Shape& s, uint64_t seed, float amp = 1.0f) {
  Tensor t = Tensor::empty(s, DType::kF32, Device::kCUDA);
  VGEN_CUDA_CHECK(kern::fill_uniform(t.raw(), kern::FloatType::kF32, t.numel(), seed, -amp, amp, compute_stream()));
  return t;
}

void report_bw(const std::string& name, double ms, double bytes) {
  std::printf("%-28s %-34s %10.3f ms %9.1f GB/s\n", name.c_str(), "", ms, bytes / (ms * 1e-3) / 1e9);
  std::fflush(stdout);
}

// The memory-bound ops of one Wan2.1-14B block at 720p (75,600 tokens, D 5120, 40 heads x 128,
// FFN 13824), bf16 activations, fp32 tables; bytes = what each op must read and write once.
void bench_dit_ops(int warmup, int reps) {
  const int64_t S = 75600, D = 5120, H = 40, Dh = 128, F = 13824;
  const auto bf = kern::FloatType::kBF16;
  const double u = double(S) * D * 2;  // one bf16 [S, D] pass
  Tensor x = random_bf16({S, D}, 11), a = random_bf16({S, D}, 12), y = Tensor::empty({S, D}, DType::kBF16, Device::kCUDA);
  Tensor mod = random_f32({6, D}, 13, 0.1f), w = random_f32({D}, 14), b = random_f32({D}, 15, 0.1f);
  Tensor cs = random_f32({S, Dh}, 16), sn = random_f32({S, Dh}, 17);
  Tensor h = random_bf16({S, F}, 18);
  auto run = [&](const char* name, double bytes, const std::function<cudaError_t()>& fn) {
    report_bw(name, median_ms([&] { VGEN_CUDA_CHECK(fn()); }, warmup, reps), bytes);
  };
  const float eps = 1e-6f;
  run("layer_norm_modulate", 2 * u, [&] {
    return kern::layer_norm_modulate(x.raw(), bf, mod.f32(), mod.f32() + D, 6 * D, S, y.raw(), bf, S, D, eps,
                                     compute_stream());
  });
  run("layer_norm (affine)", 2 * u,
      [&] { return kern::layer_norm(x.raw(), bf, w.f32(), b.f32(), y.raw(), bf, S, D, eps, compute_stream()); });
  run("rms_norm_rope", 2 * u + 2.0 * S * Dh * 4, [&] {
    return kern::rms_norm_rope(x.raw(), w.f32(), kern::FloatType::kF32, cs.f32(), sn.f32(), y.raw(), bf, 1, S, H, Dh,
                               eps, compute_stream());
  });
  run("rms_norm", 2 * u,
      [&] { return kern::rms_norm(x.raw(), w.f32(), kern::FloatType::kF32, y.raw(), bf, S, D, eps, compute_stream()); });
  run("gated_residual", 3 * u, [&] {
    return kern::gated_residual(x.raw(), a.raw(), mod.f32() + 2 * D, 6 * D, S, y.raw(), bf, S, D, compute_stream());
  });
  run("residual_layer_norm_modulate", 4 * u, [&] {
    return kern::residual_layer_norm_modulate(x.raw(), a.raw(), mod.f32() + 5 * D, mod.f32(), mod.f32() + D, 6 * D, S,
                                              y.raw(), bf, S, D, eps, compute_stream());
  });
  run("add", 3 * u, [&] { return kern::add(x.raw(), a.raw(), y.raw(), bf, S * D, compute_stream()); });
  run("gelu_tanh (in place)", 2.0 * S * F * 2,
      [&] { return kern::gelu_tanh(h.raw(), bf, h.raw(), bf, S * F, compute_stream()); });
  run("copy (cudaMemcpyAsync)", 2 * u, [&] {
    return cudaMemcpyAsync(y.raw(), x.raw(), size_t(u), cudaMemcpyDeviceToDevice, compute_stream());
  });
  bench_gemm("gemm q|k|v-proj (+bias)", S, D, D, true, false, warmup, reps);
  bench_gemm("gemm qkv-proj fused (+bias)", S, 3 * D, D, true, false, warmup, reps);
  bench_gemm("gemm ffn1 (+bias)", S, F, D, true, false, warmup, reps);
  bench_gemm("gemm ffn2 (+bias)", S, D, F, true, false, warmup, reps);
  bench_gemm_nsplit("gemm ffn1 n-split", S, F, D, 2, warmup, reps);
  bench_gemm_nsplit("gemm ffn1 n-split", S, F, D, 3, warmup, reps);
  bench_gemm_nsplit("gemm ffn1 n-split", S, F, D, 6, warmup, reps);
  bench_gemm_nsplit("gemm ffn2 n-split", S, D, F, 2, warmup, reps);
  bench_gemm_nsplit("gemm ffn2 n-split", S, D, F, 4, warmup, reps);
  bench_gemm_nsplit("gemm qkv n-split", S, 3 * D, D, 3, warmup, reps);
  bench_gemm_nsplit("gemm q n-split", S, D, D, 2, warmup, reps);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool dit_ops = argc > 1 && std::strcmp(argv[1], "--dit-ops") == 0;
  if (cuda_device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int warmup = 2, reps = quick ? 3 : 7;
  if (dit_ops) {
    bench_dit_ops(warmup, reps);
    return 0;
  }
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
