// Attention forward at Wan-14B shapes (label bench, never gates): cuDNN SDPA (attention_cudnn.cuh)
// and the native flash kernel (attention.cuh attention_fwd_bf16) side by side, bf16, B = 1,
// H = 40 (--heads), D = 128, non-causal, with and without LSE. Median of 5 CUDA-event timings after warm-up
// (the warm-up also builds the cuDNN graph), on random data. The two backends' outputs are
// compared on the first query tokens and on every LSE, so a fast wrong kernel shows.
// Usage: attention_bench [--quick] [--cudnn-only] [--wgmma] [--split] [--heads N] [--kv N] [--lse-seq 01] [S ...]   (default S: 32760 75600; --quick: 32760 only)
// Prints one JSON line per measurement; TFLOP/s = 4·S·Skv·D·H / t.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "core/tensor.h"
#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_cudnn.cuh"
#include "kernels/common/convert.cuh"
#include "ops/attention_backend.h"

using namespace vgen;

namespace {

constexpr int kWarmup = 2, kReps = 5;
constexpr int64_t kCheckTokens = 512;  // query tokens compared between the backends
bool g_split = false;                  // --split: time the parts of the remainder key split
bool g_native = true;                  // --cudnn-only: skip the (slow) native kernel
bool g_wgmma = false;                  // --wgmma: also the Hopper kernel (attention_fwd_wgmma_bf16)
int64_t g_heads = 40;                  // --heads N (Wan2.1-14B: 40)
int64_t g_kv = 0;                      // --kv N: keys per query row (0: S, self-attention)
int64_t g_valid = 0;                   // --valid N: cuDNN padding mask over the first N keys (0: all)
int64_t g_groups = 0;                  // --head-groups G: cuDNN over G calls of H/G heads each (0: off)
std::string g_lse_seq = "01";          // --lse-seq: measurement order, 0 = without LSE, 1 = with (e.g. 1001)

Tensor random_bf16(const Shape& s, uint64_t seed, float amp) {
  Tensor t = Tensor::empty(s, DType::kBF16, Device::kCUDA);
  VGEN_CUDA_CHECK(kern::fill_uniform(t.raw(), kern::FloatType::kBF16, t.numel(), seed, -amp, amp, compute_stream()));
  return t;
}

// Median milliseconds of kReps runs after kWarmup; a non-success status from fn stops and is returned.
double median_ms(const std::function<cudaError_t()>& fn, cudaError_t* status) {
  for (int i = 0; i < kWarmup; ++i)
    if ((*status = fn()) != cudaSuccess) return 0;
  std::vector<double> ms;
  CudaEventTimer t;
  for (int i = 0; i < kReps; ++i) {
    t.start();
    *status = fn();
    t.stop();
    if (*status != cudaSuccess) return 0;
    ms.push_back(t.seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::vector<float> host(const Tensor& t) {
  Tensor h = t.to(Device::kCPU).to(DType::kF32);
  std::vector<float> v(size_t(h.numel()));
  std::memcpy(v.data(), h.raw(), v.size() * sizeof(float));
  return v;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - b[i]);
    m = std::isnan(d) ? INFINITY : std::max(m, d);
  }
  return m;
}

void print_line(const char* backend, int64_t S, int64_t H, int64_t D, bool lse, cudaError_t st, double ms,
                const std::string& why) {
  const int64_t Skv = g_kv > 0 ? g_kv : S;
  if (st != cudaSuccess) {
    std::string w = why;
    std::replace(w.begin(), w.end(), '"', '\'');
    std::printf(
        "{\"bench\":\"attention\",\"backend\":\"%s\",\"S\":%ld,\"H\":%ld,\"D\":%ld,\"dtype\":\"bf16\",\"lse\":%s,"
        "\"status\":\"%s\",\"why\":\"%s\"}\n",
        backend, long(S), long(H), long(D), lse ? "true" : "false",
        st == cudaErrorNotSupported ? "unsupported" : "error", w.c_str());
  } else {
    const double tflops = 4.0 * double(S) * double(Skv) * double(D) * double(H) / (ms * 1e-3) / 1e12;
    std::printf(
        "{\"bench\":\"attention\",\"backend\":\"%s\",\"S\":%ld,\"Skv\":%ld,\"H\":%ld,\"D\":%ld,\"dtype\":\"bf16\","
        "\"lse\":%s,\"status\":\"ok\",\"reps\":%d,\"median_ms\":%.3f,\"tflops\":%.1f}\n",
        backend, long(S), long(Skv), long(H), long(D), lse ? "true" : "false", kReps, ms, tflops);
  }
  std::fflush(stdout);
}

// cuDNN (bf16 out, LSE) over the heads in G calls of H/G heads each, back to back in one timed
// region (strided views of the [1, S, H, D] tensors): does a call that streams the keys of fewer
// heads at a time (more L2 reuse, less HBM traffic under the power cap) run faster per FLOP?
void bench_head_groups(int64_t S, int64_t H, int64_t D, int64_t G) {
  const int64_t Skv = g_kv > 0 ? g_kv : S, Hg = H / G;
  Tensor q = random_bf16({1, S, H, D}, 1, 2.0f), k = random_bf16({1, Skv, H, D}, 2, 2.0f),
         v = random_bf16({1, Skv, H, D}, 3, 1.0f);
  Tensor o = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor l = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA);
  cudaError_t st = cudaSuccess;
  const double ms = median_ms(
      [&] {
        for (int64_t g = 0; g < G; ++g) {
          const int64_t off = g * Hg * D;  // elements: first head of the group
          kern::AttnArgs a;
          a.q = static_cast<const char*>(q.raw()) + off * 2, a.k = static_cast<const char*>(k.raw()) + off * 2;
          a.v = static_cast<const char*>(v.raw()) + off * 2, a.out = static_cast<char*>(o.raw()) + off * 2;
          a.lse = l.f32() + g * Hg * S;
          a.B = 1, a.Sq = S, a.Skv = Skv, a.H = Hg, a.D = D, a.num_valid_kv = Skv;
          a.scale = 1.0f / std::sqrt(float(D));
          a.q_stride = a.k_stride = a.v_stride = a.o_stride = H * D;
          const cudaError_t e = kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream());
          if (e != cudaSuccess) return e;
        }
        return cudaSuccess;
      },
      &st);
  const double tflops = st == cudaSuccess ? 4.0 * double(S) * double(Skv) * double(D) * double(H) / (ms * 1e-3) / 1e12 : 0;
  std::printf("{\"bench\":\"attention_head_groups\",\"S\":%ld,\"Skv\":%ld,\"H\":%ld,\"groups\":%ld,\"status\":\"%s\","
              "\"median_ms\":%.3f,\"tflops\":%.1f}\n",
              long(S), long(Skv), long(H), long(G), st == cudaSuccess ? "ok" : kern::attention_cudnn_last_error(), ms,
              tflops);
  std::fflush(stdout);
}

void bench_shape(int64_t S, int64_t H, int64_t D) {
  const int64_t B = 1;
  // Amplitude 2 for q/k: peaked softmax rows, as in real attention.
  const int64_t Skv = g_kv > 0 ? g_kv : S;
  Tensor q = random_bf16({B, S, H, D}, 1, 2.0f), k = random_bf16({B, Skv, H, D}, 2, 2.0f),
         v = random_bf16({B, Skv, H, D}, 3, 1.0f);
  Tensor o_native = Tensor::empty({B, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor o_cudnn = Tensor::empty({B, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor l_native = Tensor::empty({B, H, S}, DType::kF32, Device::kCUDA);
  Tensor l_cudnn = Tensor::empty({B, H, S}, DType::kF32, Device::kCUDA);
  auto args = [&](Tensor& o, Tensor* l) {
    kern::AttnArgs a;
    a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = o.raw(), a.lse = l ? l->f32() : nullptr;
    a.B = B, a.Sq = S, a.Skv = Skv, a.H = H, a.D = D, a.num_valid_kv = g_valid > 0 ? g_valid : Skv, a.scale = 1.0f / std::sqrt(float(D));
    return a;
  };
  Tensor o_wgmma = Tensor::empty({B, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor l_wgmma = Tensor::empty({B, H, S}, DType::kF32, Device::kCUDA);
  double ms_native[2] = {0, 0}, ms_cudnn[2] = {0, 0}, ms_wgmma[2] = {0, 0};
  for (char c : g_lse_seq) {  // later runs of the same kind overwrite earlier ones in ms_*
    const bool with_lse = c == '1';
    const kern::AttnArgs an = args(o_native, with_lse ? &l_native : nullptr);
    cudaError_t st = cudaSuccess;
    if (g_native) {
      ms_native[with_lse] =
          median_ms([&] { return kern::attention_fwd_bf16(an, kern::AttnOut::kBF16, compute_stream()); }, &st);
      print_line("native", S, H, D, with_lse, st, ms_native[with_lse], st == cudaSuccess ? "" : cudaGetErrorString(st));
      if (st != cudaSuccess) ms_native[with_lse] = 0;
    }

    const kern::AttnArgs ac = args(o_cudnn, with_lse ? &l_cudnn : nullptr);
    std::string why;
    if (!kern::attention_cudnn_available(&why)) {
      st = cudaErrorNotSupported;
    } else {
      ms_cudnn[with_lse] =
          median_ms(
              [&] {
                return kern::attention_fwd_cudnn(ac, kern::AttnOut::kBF16, compute_stream(),
                                                 g_valid > 0 ? kern::CudnnKvMask::kPaddingMask
                                                             : kern::CudnnKvMask::kSlice);
              },
              &st);
      if (st != cudaSuccess) why = kern::attention_cudnn_last_error();
    }
    print_line("cudnn", S, H, D, with_lse, st, ms_cudnn[with_lse], why);
    if (st != cudaSuccess) ms_cudnn[with_lse] = 0;
    if (g_wgmma) {
      const kern::AttnArgs aw = args(o_wgmma, with_lse ? &l_wgmma : nullptr);
      ms_wgmma[with_lse] =
          median_ms([&] { return kern::attention_fwd_wgmma_bf16(aw, compute_stream()); }, &st);
      print_line("wgmma", S, H, D, with_lse, st, ms_wgmma[with_lse], st == cudaSuccess ? "" : cudaGetErrorString(st));
      if (st != cudaSuccess) ms_wgmma[with_lse] = 0;
    }
  }
  // The Hopper kernel against cuDNN (with LSE): first and last query tokens, every LSE.
  if (ms_wgmma[1] > 0 && ms_cudnn[1] > 0) {
    const int64_t n = std::min(S, kCheckTokens);
    const std::vector<float> w0 = host(o_wgmma[0].narrow(0, n)), c0 = host(o_cudnn[0].narrow(0, n));
    const std::vector<float> w1 = host(o_wgmma[0].narrow(S - n, n)), c1 = host(o_cudnn[0].narrow(S - n, n));
    const std::vector<float> lw = host(l_wgmma), lc = host(l_cudnn);
    std::printf(
        "{\"bench\":\"attention_check_wgmma\",\"S\":%ld,\"tokens\":%ld,\"first_rel_l2\":%.3e,\"last_rel_l2\":%.3e,"
        "\"out_max_abs\":%.3e,\"lse_max_abs\":%.3e,\"wgmma_over_cudnn_lse\":%.4f}\n",
        long(S), long(n), rel_l2(w0, c0), rel_l2(w1, c1), std::max(max_abs_diff(w0, c0), max_abs_diff(w1, c1)),
        max_abs_diff(lw, lc), ms_wgmma[1] / ms_cudnn[1]);
    std::fflush(stdout);
  }
  // Agreement of the last (with-LSE) runs of both backends.
  if (ms_native[1] > 0 && ms_cudnn[1] > 0) {
    const int64_t n = std::min(S, kCheckTokens);
    const std::vector<float> on = host(o_native[0].narrow(0, n)), oc = host(o_cudnn[0].narrow(0, n));
    const std::vector<float> ln = host(l_native), lc = host(l_cudnn);
    std::printf(
        "{\"bench\":\"attention_check\",\"S\":%ld,\"H\":%ld,\"D\":%ld,\"tokens\":%ld,\"out_rel_l2\":%.3e,"
        "\"out_max_abs\":%.3e,\"lse_max_abs\":%.3e,\"cudnn_over_native\":%.3f,\"cudnn_over_native_lse\":%.3f}\n",
        long(S), long(H), long(D), long(n), rel_l2(oc, on), max_abs_diff(oc, on), max_abs_diff(lc, ln),
        ms_cudnn[0] > 0 && ms_native[0] > 0 ? ms_native[0] / ms_cudnn[0] : 0.0, ms_native[1] / ms_cudnn[1]);
    std::fflush(stdout);
  }
}

// --split: the parts of the remainder key split at S tokens, each timed alone, interleaved: the
// 128-aligned main range (cuDNN, LSE), the remainder range (cuDNN, LSE; native, LSE), the LSE merge
// of the two, the remainder folded in by attention_tail_merge_bf16 instead, and the whole dispatch
// (cuda_attention_auto) both ways. What do the remainder and merge cost?
void bench_split(int64_t S, int64_t H, int64_t D) {
  const int64_t main_keys = S / 128 * 128, tail = S - main_keys;
  Tensor q = random_bf16({1, S, H, D}, 1, 2.0f), k = random_bf16({1, S, H, D}, 2, 2.0f),
         v = random_bf16({1, S, H, D}, 3, 1.0f);
  Tensor o = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor o2 = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
  Tensor l = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA), l2 = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA);
  auto args = [&](int64_t c0, int64_t len, Tensor& out, Tensor& lse) {
    kern::AttnArgs a;
    a.q = q.raw(), a.k = static_cast<const char*>(k.raw()) + c0 * H * D * 2;
    a.v = static_cast<const char*>(v.raw()) + c0 * H * D * 2, a.out = out.raw(), a.lse = lse.f32();
    a.B = 1, a.Sq = S, a.Skv = len, a.H = H, a.D = D, a.num_valid_kv = len, a.scale = 1.0f / std::sqrt(float(D));
    return a;
  };
  const kern::AttnArgs am = args(0, main_keys, o, l), ar = args(main_keys, tail, o2, l2);
  const void* parts[2] = {o.raw(), o2.raw()};
  const float* lses[2] = {l.f32(), l2.f32()};
  const AttentionKeySplit fold{-1, true}, tail_cudnn{-1, false};  // the remainder both ways
  const std::vector<std::pair<std::string, std::function<cudaError_t()>>> fns = {
      {"main_cudnn", [&] { return kern::attention_fwd_cudnn(am, kern::AttnOut::kBF16, compute_stream()); }},
      {"tail_cudnn", [&] { return kern::attention_fwd_cudnn(ar, kern::AttnOut::kBF16, compute_stream()); }},
      {"tail_native", [&] { return kern::attention_fwd_bf16(ar, kern::AttnOut::kBF16, compute_stream()); }},
      {"merge", [&] { return kern::attention_merge_parts_bf16(parts, lses, 2, o.raw(), nullptr, 1, S, H, D, compute_stream()); }},
      {"tail_fold", [&] {  // the remainder folded into the main range's o (in place, l as lse_in)
         kern::AttnArgs a = ar;
         a.out = o.raw(), a.lse = nullptr;
         return kern::attention_tail_merge_bf16(a, l.f32(), compute_stream());
       }},
      {"whole", [&] {
         cuda_attention_auto(q, k, v, o, &l, S, 1.0f / std::sqrt(float(D)), AttentionBackend::kAuto, fold);
         return cudaSuccess;
       }},
      {"whole_tail_cudnn", [&] {
         cuda_attention_auto(q, k, v, o, &l, S, 1.0f / std::sqrt(float(D)), AttentionBackend::kAuto, tail_cudnn);
         return cudaSuccess;
       }}};
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < fns.size(); ++i) {
      const auto& [name, fn] = fns[round ? fns.size() - 1 - i : i];
      cudaError_t st = cudaSuccess;
      const double ms = median_ms(fn, &st);
      std::printf("{\"bench\":\"attention_split\",\"part\":\"%s\",\"S\":%ld,\"main\":%ld,\"tail\":%ld,\"status\":\"%s\","
                  "\"median_ms\":%.3f}\n",
                  name.c_str(), long(S), long(main_keys), long(tail), st == cudaSuccess ? "ok" : cudaGetErrorString(st), ms);
      std::fflush(stdout);
    }
  // Both ways of the remainder on the same inputs, and the split against the native kernel over all
  // keys in one call (fp32 softmax, its own rounding): how far apart are they at this shape?
  const float scale = 1.0f / std::sqrt(float(D));
  Tensor lf = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA), lc = Tensor::empty({1, H, S}, DType::kF32, Device::kCUDA);
  Tensor of = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA), oc = Tensor::empty({1, S, H, D}, DType::kBF16, Device::kCUDA);
  cuda_attention_auto(q, k, v, of, &lf, S, scale, AttentionBackend::kAuto, fold);
  cuda_attention_auto(q, k, v, oc, &lc, S, scale, AttentionBackend::kAuto, tail_cudnn);
  kern::AttnArgs an = args(0, S, o, l);
  VGEN_CUDA_CHECK(kern::attention_fwd_bf16(an, kern::AttnOut::kBF16, compute_stream()));
  const int64_t n = std::min(S, kCheckTokens);
  const std::vector<float> vf = host(of[0].narrow(0, n)), vc = host(oc[0].narrow(0, n)), vn = host(o[0].narrow(0, n));
  const std::vector<float> hf = host(lf), hc = host(lc), hn = host(l);
  std::printf("{\"bench\":\"attention_split_check\",\"S\":%ld,\"tokens\":%ld,\"fold_vs_cudnn_tail_rel_l2\":%.3e,"
              "\"fold_vs_native_rel_l2\":%.3e,\"cudnn_tail_vs_native_rel_l2\":%.3e,\"fold_vs_cudnn_tail_lse_max_abs\":%.3e,"
              "\"fold_vs_native_lse_max_abs\":%.3e}\n",
              long(S), long(n), rel_l2(vf, vc), rel_l2(vf, vn), rel_l2(vc, vn), max_abs_diff(hf, hc), max_abs_diff(hf, hn));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--split") == 0)
      g_split = true;
    else if (std::strcmp(argv[i], "--cudnn-only") == 0)
      g_native = false;
    else if (std::strcmp(argv[i], "--wgmma") == 0)
      g_wgmma = true;
    else if (std::strcmp(argv[i], "--heads") == 0 && i + 1 < argc)
      g_heads = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--head-groups") == 0 && i + 1 < argc)
      g_groups = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--lse-seq") == 0 && i + 1 < argc)
      g_lse_seq = argv[++i];
    else if (std::strcmp(argv[i], "--valid") == 0 && i + 1 < argc)
      g_valid = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--kv") == 0 && i + 1 < argc)
      g_kv = std::atoll(argv[++i]);
    else
      sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.empty()) sizes = quick ? std::vector<int64_t>{32760} : std::vector<int64_t>{32760, 75600};
  if (cuda_device_count() == 0) {
    std::printf("{\"bench\":\"attention\",\"status\":\"skipped\",\"why\":\"no CUDA device\"}\n");
    return 0;
  }
  cudaDeviceProp prop{};
  VGEN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "{\"bench\":\"attention_device\",\"device\":\"%s\",\"sms\":%d,\"cudnn_built\":%s,\"cudnn_version\":%ld}\n",
      prop.name, prop.multiProcessorCount, kern::attention_cudnn_built() ? "true" : "false",
      long(kern::attention_cudnn_version()));
  // 480x832x81 -> 32,760 tokens; 720x1280x81 -> 75,600 tokens (Wan2.1-14B: 40 heads x 128).
  for (int64_t S : sizes)
    if (g_split)
      bench_split(S, g_heads, 128);
    else if (g_groups > 0)
      bench_head_groups(S, g_heads, 128, g_groups);
    else
      bench_shape(S, g_heads, 128);
  return 0;
}
