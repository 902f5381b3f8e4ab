// FP8 e4m3 GEMM (linear_fp8, kernels/gemm/gemm_fp8.cuh) against the bf16 GEMM (linear) at the
// Wan2.1-14B block shapes, and the per-token activation quantisation (quantize_rows_fp8) that the
// FP8 path adds (label bench, never gates; CUDA builds only). Random data, CUDA-event median after
// warm-up; each GEMM with its DiT epilogue (bf16 bias; + GELU-tanh for the FFN up-projection).
// Usage: bench_gemm_fp8 [--quick]   (--quick: M = 32760 only, fewer repetitions)
// One JSON line per shape: {"bench":"gemm_fp8","M","N","K","epilogue","bf16_ms","bf16_tflops",
// "fp8_ms","fp8_tflops","fp8_path","speedup","quant_ms","quant_gbps","speedup_with_quant"};
// quant_gbps counts the bf16 read, the e4m3 write and the scales.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "bench_util.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/tensor.h"
#include "kernels/common/convert.cuh"
#include "kernels/gemm/gemm.cuh"
#include "kernels/gemm/gemm_fp8.cuh"
#include "kernels/quant/quant.cuh"

using namespace vgen;

namespace {

using bench::median_ms;
using bench::random_bf16;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "{}: {} ({})", what, cudaGetErrorString(e), kern::gemm_last_error());
}

void bench_shape(int64_t M, int64_t N, int64_t K, bool gelu, int warmup, int reps) {
  Tensor x = random_bf16({M, K}, 1, 1.0f), w = random_bf16({N, K}, 2, 0.05f), b = random_bf16({N}, 3, 0.1f);
  Tensor y = Tensor::empty({M, N}, DType::kBF16, Device::kCUDA);
  Tensor x8 = Tensor::empty({M, K}, DType::kU8, Device::kCUDA), w8 = Tensor::empty({N, K}, DType::kU8, Device::kCUDA);
  Tensor sx = Tensor::empty({M}, DType::kF32, Device::kCUDA), sw = Tensor::empty({N}, DType::kF32, Device::kCUDA);
  check(kern::quantize_rows_fp8(w.raw(), true, N, K, K, static_cast<uint8_t*>(w8.raw()), sw.f32(), compute_stream()),
        "quantize w");
  const kern::GemmAct act = gelu ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;

  kern::LinearArgs la;
  la.x = x.raw(), la.w = w.raw(), la.bias = b.raw(), la.y = y.raw(), la.M = M, la.N = N, la.K = K, la.act = act;
  const double bf16_ms = median_ms([&] { check(kern::linear(la, compute_stream()), "linear"); }, warmup, reps);

  auto quant = [&] {
    check(kern::quantize_rows_fp8(x.raw(), true, M, K, K, static_cast<uint8_t*>(x8.raw()), sx.f32(), compute_stream()),
          "quantize x");
  };
  const double quant_ms = median_ms(quant, warmup, reps);

  kern::Fp8LinearArgs fa;
  fa.x8 = static_cast<const uint8_t*>(x8.raw()), fa.x_scale = sx.f32();
  fa.w8 = static_cast<const uint8_t*>(w8.raw()), fa.w_scale = sw.f32();
  fa.bias = b.raw(), fa.y = y.raw(), fa.M = M, fa.N = N, fa.K = K, fa.act = act;
  const uint64_t unfused0 = kern::gemm_fp8_stats().unfused, unscaled0 = kern::gemm_fp8_stats().unscaled;
  const double fp8_ms = median_ms([&] { check(kern::linear_fp8(fa, compute_stream()), "linear_fp8"); }, warmup, reps);
  const kern::Fp8GemmStats st = kern::gemm_fp8_stats();
  const char* path = st.unscaled > unscaled0 ? "unscaled" : st.unfused > unfused0 ? "separate" : "direct";

  const double flop = 2.0 * double(M) * double(N) * double(K);
  const double quant_bytes = double(M) * double(K) * 3.0 + double(M) * 4.0;
  std::printf("{\"bench\":\"gemm_fp8\",\"M\":%ld,\"N\":%ld,\"K\":%ld,\"epilogue\":\"%s\",\"bf16_ms\":%.4f,"
              "\"bf16_tflops\":%.1f,\"fp8_ms\":%.4f,\"fp8_tflops\":%.1f,\"fp8_path\":\"%s\",\"speedup\":%.3f,"
              "\"quant_ms\":%.4f,\"quant_gbps\":%.1f,\"speedup_with_quant\":%.3f}\n",
              long(M), long(N), long(K), gelu ? "bias_gelu" : "bias", bf16_ms, flop / (bf16_ms * 1e-3) / 1e12, fp8_ms,
              flop / (fp8_ms * 1e-3) / 1e12, path, bf16_ms / fp8_ms, quant_ms, quant_bytes / (quant_ms * 1e-3) / 1e9,
              bf16_ms / (fp8_ms + quant_ms));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    if (cuda_device_count() == 0) {
      std::printf("no CUDA device: nothing to measure\n");
      return 77;
    }
    cudaDeviceProp prop{};
    VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const int warmup = 3, reps = quick ? 5 : 15;
    // 720x1280x81 -> 75,600 tokens, 480x832x81 -> 32,760 (Wan2.1-14B: D 5120, FFN 13824).
    std::vector<int64_t> tokens = {32760};
    if (!quick) tokens.insert(tokens.begin(), 75600);
    for (int64_t M : tokens) {
      bench_shape(M, 5120, 5120, false, warmup, reps);   // q/k/v/o projections
      bench_shape(M, 13824, 5120, true, warmup, reps);   // FFN up + GELU
      bench_shape(M, 5120, 13824, false, warmup, reps);  // FFN down
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gemm_fp8: %s\n", e.what());
    return 1;
  }
  return 0;
}
