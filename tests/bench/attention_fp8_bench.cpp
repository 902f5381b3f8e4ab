// FP8 attention at Wan-14B shapes (label bench, never gates): the Hopper bf16 kernel
// (attention_fwd_wgmma_bf16) against the FP8 one (attention_fwd_fp8: quantisation pass + kernel;
// the pass also timed alone) with Q·Kᵀ in e4m3 (the default; the top-level fp8_* keys) and in INT8
// (the "int8_qk" object), B = 1, H = 40, D = 128, self-attention with LSE. Median of 5 CUDA-event
// timings after 2 warm-ups on random data; the two forms alternate over two rounds so that the
// GPU's clock under its power cap favours neither: each time is the smaller median of its rounds.
// Each output's rel-L2 against exact attention (fp64 on the host, 64 sampled query rows of heads 0
// and 1) is printed with each line so a fast wrong kernel shows, and per form the FNV-1a hashes of
// its output and LSE bytes combined ("out_lse_fnv1a"), so two builds of the kernel can be shown
// bit-identical on the same data. TFLOP/s = 4·S²·D·H / t.
// --sustain SECONDS adds a "sustained" object: the e4m3 form run back to back for at least that
// long between two events (the GPU at its power cap, where a 5-call burst may run at a higher
// clock), its TFLOP/s with and without the quantisation passes (the pass's burst time times the
// calls taken out).
// Usage: attention_fp8_bench [--sustain SECONDS] [S ...]   (default 32760 75600). One JSON line per shape.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/cuda_stream.h"
#include "core/tensor.h"
#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_fp8.cuh"
#include "kernels/common/convert.cuh"

using namespace vgen;

namespace {

void fill_random(Tensor& t, uint64_t seed, float amp) {
  std::vector<float> h(size_t(t.numel()));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : h) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = amp * (float(x >> 40) / float(1 << 24) * 2.0f - 1.0f);
  }
  t.copy_from(Tensor::from_vector(h, t.shape()).to(DType::kBF16).to(Device::kCUDA));
}

// Exact attention (fp64) of query rows `rows` of heads 0..heads-1 against each output's values there.
struct Sampled {
  std::vector<int64_t> rows;
  int64_t heads = 2;
  std::vector<double> exact;  // [heads][rows][D]
};

Sampled exact_rows(const Tensor& q, const Tensor& k, const Tensor& v, int64_t S, int64_t H, int64_t D, float scale) {
  Sampled r;
  for (int64_t i = 0; i < 64; ++i) r.rows.push_back((i * 7919 + 13) % S);
  const Tensor hq = q.to(Device::kCPU).to(DType::kF32), hk = k.to(Device::kCPU).to(DType::kF32),
               hv = v.to(Device::kCPU).to(DType::kF32);
  const float *pq = hq.f32(), *pk = hk.f32(), *pv = hv.f32();
  r.exact.assign(size_t(r.heads * 64 * D), 0.0);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t h = 0; h < r.heads; ++h)
    for (int64_t i = 0; i < 64; ++i) {
      const float* qi = pq + (r.rows[size_t(i)] * H + h) * D;
      std::vector<double> sc(static_cast<size_t>(S));
      double mx = -1e300;
      for (int64_t j = 0; j < S; ++j) {
        const float* kj = pk + (j * H + h) * D;
        double d = 0;
        for (int64_t c = 0; c < D; ++c) d += double(qi[c]) * kj[c];
        sc[size_t(j)] = d * scale;
        mx = std::max(mx, sc[size_t(j)]);
      }
      double l = 0;
      std::vector<double> acc(static_cast<size_t>(D), 0.0);
      for (int64_t j = 0; j < S; ++j) {
        const double p = std::exp(sc[size_t(j)] - mx);
        l += p;
        const float* vj = pv + (j * H + h) * D;
        for (int64_t c = 0; c < D; ++c) acc[size_t(c)] += p * vj[c];
      }
      for (int64_t c = 0; c < D; ++c) r.exact[size_t((h * 64 + i) * D + c)] = acc[size_t(c)] / l;
    }
  return r;
}

double sampled_rel_l2(const Sampled& r, const Tensor& out, int64_t H, int64_t D) {
  const Tensor h = out.to(Device::kCPU).to(DType::kF32);
  double num = 0, den = 0;
  for (int64_t hh = 0; hh < r.heads; ++hh)
    for (size_t i = 0; i < r.rows.size(); ++i)
      for (int64_t c = 0; c < D; ++c) {
        const double e = r.exact[size_t((hh * 64 + int64_t(i)) * D + c)];
        const double d = h.f32()[(r.rows[i] * H + hh) * D + c] - e;
        num += d * d, den += e * e;
      }
  return std::sqrt(num / den);
}

double rel_l2(const Tensor& a, const Tensor& ref) {
  const Tensor ha = a.to(Device::kCPU).to(DType::kF32), hr = ref.to(Device::kCPU).to(DType::kF32);
  double num = 0, den = 0;
  for (int64_t i = 0; i < ha.numel(); ++i) {
    const double d = double(ha.f32()[i]) - hr.f32()[i];
    num += d * d, den += double(hr.f32()[i]) * hr.f32()[i];
  }
  return std::sqrt(num / den);
}

// FNV-1a of a tensor's bytes (as stored): two kernel variants' outputs are bit-identical when equal.
uint64_t fnv1a(const Tensor& t) {
  const Tensor h = t.to(Device::kCPU);
  const auto* p = static_cast<const uint8_t*>(h.raw());
  uint64_t x = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < h.nbytes(); ++i) x = (x ^ p[i]) * 0x100000001b3ull;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> shapes;
  double sustain_s = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--sustain" && i + 1 < argc)
      sustain_s = std::atof(argv[++i]);
    else
      shapes.push_back(std::atoll(argv[i]));
  }
  if (shapes.empty()) shapes = {32760, 75600};
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || !kern::attention_fp8_available()) {
    std::fprintf(stderr, "attention_fp8_bench: no GPU with the FP8 Hopper kernel (skipped)\n");
    return 77;
  }
  const int64_t H = 40, D = 128;
  for (int64_t S : shapes) {
    Tensor q = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
    Tensor k = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
    Tensor v = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
    fill_random(q, 1, 2.0f);
    fill_random(k, 2, 2.0f);
    fill_random(v, 3, 1.0f);
    Tensor o16 = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
    Tensor o8 = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
    Tensor lse = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA);
    kern::AttnArgs a;
    a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.lse = lse.f32();
    a.B = 1, a.Sq = S, a.Skv = S, a.H = H, a.D = D, a.num_valid_kv = S, a.scale = 1.0f / std::sqrt(float(D));
    const size_t wsb = kern::attention_fp8_workspace_bytes(a);
    Tensor ws = Tensor::empty({int64_t(wsb)}, DType::kU8, Device::kCUDA);
    kern::AttnArgs a16 = a, a8 = a;
    a16.out = o16.raw(), a8.out = o8.raw();
    const double t16 = bench::median_ms([&] { kern::attention_fwd_wgmma_bf16(a16, compute_stream()); }, 2, 5);
    // The two forms alternate over two rounds; each keeps the smaller median.
    const kern::Fp8Qk forms[2] = {kern::Fp8Qk::kE4m3, kern::Fp8Qk::kInt8};
    double t[2] = {1e30, 1e30}, tq[2], rel[2];
    for (int round = 0; round < 2; ++round)
      for (int f = 0; f < 2; ++f)
        t[f] = std::min(t[f], bench::median_ms(
                                  [&] { kern::attention_fwd_fp8(a8, ws.raw(), wsb, compute_stream(), forms[f]); }, 2, 5));
    for (int f = 0; f < 2; ++f)
      tq[f] = bench::median_ms(
          [&] { kern::attention_fp8_quantize(a8, ws.raw(), wsb, compute_stream(), forms[f]); }, 2, 5);
    const Sampled ex = exact_rows(q, k, v, S, H, D, a.scale);
    uint64_t hash[2];  // per form (e4m3, INT8): its output's and LSE's hashes combined
    for (int f = 1; f >= 0; --f) {  // the e4m3 (default) output last: o8 for the rel-L2 against bf16
      kern::attention_fwd_fp8(a8, ws.raw(), wsb, compute_stream(), forms[f]);
      rel[f] = sampled_rel_l2(ex, o8, H, D);
      hash[f] = fnv1a(o8) ^ (fnv1a(lse) * 31);
    }
    const double flop = 4.0 * double(S) * double(S) * double(D) * double(H);
    const double t8 = t[0], ti = t[1];
    char sustained[256] = "";
    if (sustain_s > 0) {
      const int calls = std::max(1, int(std::ceil(sustain_s * 1e3 / t8)));
      CudaEventTimer timer;
      timer.start();
      for (int c = 0; c < calls; ++c) kern::attention_fwd_fp8(a8, ws.raw(), wsb, compute_stream(), forms[0]);
      timer.stop();
      const double ms = timer.seconds() * 1e3;
      std::snprintf(sustained, sizeof sustained,
                    "\"sustained\": {\"seconds\": %.2f, \"calls\": %d, \"fp8_tflops\": %.1f, \"fp8_kernel_tflops\": %.1f}, ",
                    ms * 1e-3, calls, flop * calls / ms * 1e-9, flop * calls / (ms - calls * tq[0]) * 1e-9);
    }
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("{\"bench\": \"attention_fp8\", \"S\": %lld, \"H\": %lld, \"D\": %lld, \"bf16_wgmma_ms\": %.3f, "
                "\"bf16_wgmma_tflops\": %.1f, \"fp8_ms\": %.3f, \"fp8_tflops\": %.1f, \"fp8_quant_ms\": %.3f, "
                "\"fp8_kernel_tflops\": %.1f, \"fp8_vs_bf16_rel_l2\": %.3e, "
                "\"sampled_rel_l2_vs_exact\": {\"bf16\": %.3e, \"fp8\": %.3e}, \"qk\": \"e4m3\", "
                "\"int8_qk\": {\"fp8_ms\": %.3f, \"fp8_tflops\": %.1f, \"fp8_quant_ms\": %.3f, \"fp8_kernel_tflops\": %.1f, "
                "\"sampled_rel_l2_vs_exact\": %.3e, \"out_lse_fnv1a\": \"%016llx\"}, \"out_lse_fnv1a\": \"%016llx\", "
                "%s\"cuda\": \"%s\", \"workspace_bytes\": %zu}\n",
                (long long)S, (long long)H, (long long)D, t16, flop / t16 * 1e-9, t8, flop / t8 * 1e-9, tq[0],
                flop / (t8 - tq[0]) * 1e-9, rel_l2(o8, o16), sampled_rel_l2(ex, o16, H, D), rel[0], ti, flop / ti * 1e-9,
                tq[1], flop / (ti - tq[1]) * 1e-9, rel[1], (unsigned long long)hash[1], (unsigned long long)hash[0],
                sustained, cudaGetErrorString(e), wsb);
    std::fflush(stdout);
  }
  return 0;
}
