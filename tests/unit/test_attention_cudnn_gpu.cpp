// cuDNN SDPA (kernels/attention/attention_cudnn.cuh) and the backend dispatch (ops/attention_backend.h)
// against attention_ref: odd lengths (1, 37, 130, 1000), H 1/3/40, D 64/128, num_valid < Skv with
// excluded keys that would dominate if read (or NaN), with and without LSE, both key-exclusion
// modes, strided (fused QKV) inputs, key chunks merged by LSE, the fallback to the native kernel,
// and the graph cache.
// Skips without a CUDA device, and (with a message) in builds without cuDNN.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <limits>

#include "core/error.h"
#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_cudnn.cuh"
#include "kernels/attention/attention_ref.h"
#include "ops/attention_backend.h"
#include "ops/device_ops.h"

using namespace vgen;
using namespace vgen::testing;

#define VGEN_REQUIRE_CUDNN()                                                                                \
  do {                                                                                                      \
    VGEN_REQUIRE_GPU();                                                                                     \
    if (!kern::attention_cudnn_built())                                                                     \
      GTEST_SKIP() << "built without cuDNN (VGEN_WITH_CUDNN undefined: cuDNN or the cudnn-frontend headers " \
                      "were not found at configure time)";                                                  \
    std::string why_;                                                                                       \
    ASSERT_TRUE(kern::attention_cudnn_available(&why_)) << why_;                                            \
  } while (0)

namespace {

const AttentionKeySplit kSplit{};  // the default key split (auto, remainder folded)

struct Cfg {
  int64_t B, Sq, Skv, H, D, nvalid;
};
const Cfg kCfgs[] = {
    {1, 1, 1, 1, 128, 1},      {2, 37, 37, 3, 64, 30},      {1, 130, 130, 40, 128, 130},
    {1, 1000, 1000, 3, 128, 997}, {2, 130, 1000, 1, 64, 513}, {1, 37, 130, 40, 64, 77},
    {1, 1000, 37, 3, 64, 37},  {1, 1, 1000, 40, 128, 1000}, {3, 1000, 130, 1, 128, 1},
};

enum class Pad { kLoud, kNaN };  // content of the excluded key rows

struct Data {
  std::vector<float> q, k, v;
};

// bf16-exact inputs. Loud pad rows: k = 4 (score 4·Σq·scale, dominant for half the rows), v = 50;
// any leak of an excluded key moves the output far beyond the tolerance.
Data make_data(const Cfg& c, Pad pad, uint32_t seed) {
  Data d;
  d.q = rounded_bf16(random_vec(size_t(c.B * c.Sq * c.H * c.D), seed));
  d.k = rounded_bf16(random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 1));
  d.v = rounded_bf16(random_vec(size_t(c.B * c.Skv * c.H * c.D), seed + 2));
  const float kpad = pad == Pad::kNaN ? std::numeric_limits<float>::quiet_NaN() : 4.0f;
  const float vpad = pad == Pad::kNaN ? std::numeric_limits<float>::quiet_NaN() : 50.0f;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t j = c.nvalid; j < c.Skv; ++j)
      for (int64_t i = 0; i < c.H * c.D; ++i) {
        d.k[size_t((b * c.Skv + j) * c.H * c.D + i)] = kpad;
        d.v[size_t((b * c.Skv + j) * c.H * c.D + i)] = vpad;
      }
  return d;
}

struct Ref {
  std::vector<float> o, lse;
};
Ref reference(const Cfg& c, const Data& d, float scale) {
  Ref r;
  r.o.resize(d.q.size());
  r.lse.resize(size_t(c.B * c.H * c.Sq));
  kern::attention_ref(d.q.data(), d.k.data(), d.v.data(), r.o.data(), r.lse.data(), c.B, c.Sq, c.Skv, c.H, c.D,
                      c.nvalid, scale);
  return r;
}

// Output: rel-L2 ≤ 1e-2 and |Δ| ≤ 2⁻⁷·max|v| per element (bf16 P adds ≤ 2⁻⁹·max|v|, the bf16 output
// ≤ 2⁻⁹·|o|; fp32 scores of bf16 inputs are exact to ~1e-6 here). LSE: |Δ| ≤ 2⁻⁸ (a sum over
// bf16-rounded probabilities is still inside; log2 instead of ln, a missing scale or a leaked key
// is far outside).
void compare(const Cfg& c, const Ref& r, const std::vector<float>& o, const std::vector<float>* lse, const char* what) {
  SCOPED_TRACE(::testing::Message() << what << " B=" << c.B << " Sq=" << c.Sq << " Skv=" << c.Skv << " H=" << c.H
                                    << " D=" << c.D << " nvalid=" << c.nvalid);
  ASSERT_EQ(o.size(), r.o.size());
  double num = 0, den = 0, worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    const double e = double(o[i]) - r.o[i];
    num += e * e;
    den += double(r.o[i]) * r.o[i];
    const double ae = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::fabs(e);
    if (ae > worst) {
      worst = ae;
      worst_at = i;
    }
  }
  const double rel = std::sqrt(num / std::max(den, 1e-30));
  EXPECT_LE(rel, 1e-2) << "out rel-L2";
  EXPECT_LE(worst, std::ldexp(1.0, -7)) << "max |out - ref| at " << worst_at << ": " << o[worst_at] << " vs "
                                        << r.o[worst_at];
  EXPECT_GT(den, 0.0);
  if (lse) {
    ASSERT_EQ(lse->size(), r.lse.size());
    int bad = 0;
    for (size_t i = 0; i < r.lse.size(); ++i)
      if (!(std::fabs((*lse)[i] - r.lse[i]) <= std::ldexp(1.0, -8)) && ++bad <= 5)
        ADD_FAILURE() << "lse[" << i << "] = " << (*lse)[i] << ", expected " << r.lse[i];
    EXPECT_EQ(bad, 0);
  }
}

kern::AttnArgs args_of(const Cfg& c, const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                       float scale) {
  kern::AttnArgs a;
  a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = out.raw(), a.lse = lse ? lse->f32() : nullptr;
  a.B = c.B, a.Sq = c.Sq, a.Skv = c.Skv, a.H = c.H, a.D = c.D, a.num_valid_kv = c.nvalid, a.scale = scale;
  return a;
}

void run_case(const Cfg& c, Pad pad, const std::vector<kern::CudnnKvMask>& masks, uint32_t seed) {
  const float scale = 1.0f / std::sqrt(float(c.D));
  const Data d = make_data(c, pad, seed);
  const Ref r = reference(c, d, scale);
  Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
  Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  for (kern::CudnnKvMask mask : masks)
    for (bool with_lse : {true, false}) {
      Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
      Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
      const kern::AttnArgs a = args_of(c, q, k, v, out, with_lse ? &lse : nullptr, scale);
      const cudaError_t e = kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream(), mask);
      const char* what = mask == kern::CudnnKvMask::kSlice ? (with_lse ? "slice+lse" : "slice")
                                                           : (with_lse ? "padding+lse" : "padding");
      ASSERT_EQ(e, cudaSuccess) << what << ": " << kern::attention_cudnn_last_error() << " (B=" << c.B
                                << " Sq=" << c.Sq << " Skv=" << c.Skv << " H=" << c.H << " D=" << c.D << ")";
      VGEN_CUDA_CHECK(cudaStreamSynchronize(compute_stream()));
      const std::vector<float> o = host_f32(out);
      const std::vector<float> l = host_f32(lse);
      compare(c, r, o, with_lse ? &l : nullptr, what);
    }
}

}  // namespace

TEST(AttentionCudnnGpu, MatchesRefBothMasks) {
  VGEN_REQUIRE_CUDNN();
  uint32_t seed = 100;
  for (const Cfg& c : kCfgs)
    run_case(c, Pad::kLoud, {kern::CudnnKvMask::kSlice, kern::CudnnKvMask::kPaddingMask}, seed += 7);
}

TEST(AttentionCudnnGpu, SliceNeverReadsExcludedKeys) {
  VGEN_REQUIRE_CUDNN();
  uint32_t seed = 300;
  for (const Cfg& c : {Cfg{2, 37, 37, 3, 64, 30}, Cfg{1, 130, 1000, 3, 128, 513}, Cfg{3, 65, 130, 2, 128, 1}})
    run_case(c, Pad::kNaN, {kern::CudnnKvMask::kSlice}, seed += 7);
}

// The padding mask (kPaddingMask) reads the excluded rows: with NaN there cuDNN 9.14 returns NaN rows
// (seen on the H200), so its contract asks for finite pad rows (MatchesRefBothMasks covers it with
// loud ones) and the default kSlice, which never reads them, is what the model uses.

TEST(AttentionCudnnGpu, StridedFusedQkv) {
  VGEN_REQUIRE_CUDNN();
  // q, k, v interleaved per token in one [B, S, 3, H, D] buffer (token stride 3·H·D).
  const Cfg c{2, 77, 77, 3, 64, 70};
  const float scale = 0.125f;
  auto qkv = rounded_bf16(random_vec(size_t(c.B * c.Sq * 3 * c.H * c.D), 21));
  Tensor dqkv = device_tensor(qkv, {c.B, c.Sq, 3, c.H, c.D}, DType::kBF16);
  Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
  Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
  const char* base = static_cast<const char*>(dqkv.raw());
  const int64_t hd = c.H * c.D;
  kern::AttnArgs a;
  a.q = base, a.k = base + hd * 2, a.v = base + 2 * hd * 2;
  a.out = out.raw(), a.lse = lse.f32();
  a.B = c.B, a.Sq = c.Sq, a.Skv = c.Skv, a.H = c.H, a.D = c.D, a.num_valid_kv = c.nvalid, a.scale = scale;
  a.q_stride = a.k_stride = a.v_stride = 3 * hd;
  ASSERT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream()), cudaSuccess)
      << kern::attention_cudnn_last_error();
  Data d;
  d.q.resize(size_t(c.B * c.Sq * hd)), d.k.resize(d.q.size()), d.v.resize(d.q.size());
  for (int64_t t = 0; t < c.B * c.Sq; ++t)
    for (int64_t i = 0; i < hd; ++i) {
      d.q[size_t(t * hd + i)] = qkv[size_t((t * 3 + 0) * hd + i)];
      d.k[size_t(t * hd + i)] = qkv[size_t((t * 3 + 1) * hd + i)];
      d.v[size_t(t * hd + i)] = qkv[size_t((t * 3 + 2) * hd + i)];
    }
  const Ref r = reference(c, d, scale);
  const std::vector<float> o = host_f32(out), l = host_f32(lse);
  compare(c, r, o, &l, "strided");
}

TEST(AttentionCudnnGpu, UnsupportedIsReportedNotLaunched) {
  VGEN_REQUIRE_CUDNN();
  const Cfg c{1, 37, 53, 2, 12, 40};  // D = 12 (tiny model): not a multiple of 8
  Tensor q = device_tensor(random_vec(size_t(c.B * c.Sq * c.H * c.D), 1), {c.B, c.Sq, c.H, c.D}, DType::kBF16);
  Tensor k = device_tensor(random_vec(size_t(c.B * c.Skv * c.H * c.D), 2), {c.B, c.Skv, c.H, c.D}, DType::kBF16);
  Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
  kern::AttnArgs a = args_of(c, q, k, k, out, nullptr, 0.3f);
  EXPECT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream()), cudaErrorNotSupported);
  EXPECT_NE(std::string(kern::attention_cudnn_last_error()).find("head dim 12"), std::string::npos)
      << kern::attention_cudnn_last_error();
  Tensor out32 = Tensor::empty({c.B, c.Sq, c.H, 64}, DType::kF32, Device::kCUDA);
  Tensor q64 = device_tensor(random_vec(size_t(c.B * c.Sq * c.H * 64), 3), {c.B, c.Sq, c.H, 64}, DType::kBF16);
  a = args_of({1, 37, 37, 2, 64, 37}, q64, q64, q64, out32, nullptr, 0.1f);
  EXPECT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kF32, compute_stream()), cudaErrorNotSupported);
  a.num_valid_kv = 0;  // no valid key: the native kernel writes 0 / -inf
  EXPECT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream()), cudaErrorNotSupported);
}

TEST(AttentionCudnnGpu, BackendDispatchAndFallback) {
  VGEN_REQUIRE_CUDNN();
  EXPECT_TRUE(cudnn_attention_available());
  for (const Cfg& c : {Cfg{2, 37, 53, 2, 12, 40}, Cfg{1, 130, 200, 3, 128, 150}}) {
    const float scale = 1.0f / std::sqrt(float(c.D));
    const Data d = make_data(c, Pad::kLoud, 900);
    const Ref r = reference(c, d, scale);
    Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
    Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
    Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
    for (const char* backend : {"auto", "cudnn", "native"}) {
      Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
      Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
      const uint64_t wgmma0 = kern::attention_wgmma_calls();
      const AttentionBackend used = cuda_attention_auto(q, k, v, out, &lse, c.nvalid, scale, backend, kSplit);
      // auto and native take the own Hopper kernel at D = 128 wherever it runs (sm_90).
      const bool hopper = std::string(backend) != "cudnn" && c.D == 128 && kern::attention_wgmma_available();
      const bool expect_cudnn = c.D % 8 == 0 && !hopper && std::string(backend) != "native";
      EXPECT_EQ(used, expect_cudnn ? AttentionBackend::kCudnn : AttentionBackend::kNative)
          << backend << " D=" << c.D;
      EXPECT_EQ(kern::attention_wgmma_calls() - wgmma0, hopper ? 1u : 0u) << backend << " D=" << c.D;
      const std::vector<float> o = host_f32(out), l = host_f32(lse);
      compare(c, r, o, &l, backend);
    }
    // An f32 output (Ring partials) always runs on the native kernel.
    Tensor out32 = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kF32, Device::kCUDA);
    EXPECT_EQ(cuda_attention_auto(q, k, v, out32, nullptr, c.nvalid, scale, "cudnn", kSplit),
              AttentionBackend::kNative);
  }
  Tensor t = Tensor::empty({1, 1, 1, 64}, DType::kBF16, Device::kCUDA);
  try {
    cuda_attention_auto(t, t, t, t, nullptr, 1, 1.0f, "flash3", kSplit);
    ADD_FAILURE() << "unknown backend accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(e.message().find("attention_config.backend"), std::string::npos) << e.message();
  }
}

TEST(AttentionCudnnGpu, GraphsAreCached) {
  VGEN_REQUIRE_CUDNN();
  const Cfg c{1, 61, 61, 2, 64, 61};
  Tensor q = device_tensor(rounded_bf16(random_vec(size_t(c.B * c.Sq * c.H * c.D), 5)), {c.B, c.Sq, c.H, c.D},
                           DType::kBF16);
  Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
  const kern::AttnArgs a = args_of(c, q, q, q, out, nullptr, 0.11f);
  ASSERT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream()), cudaSuccess)
      << kern::attention_cudnn_last_error();
  const kern::CudnnAttnStats s1 = kern::attention_cudnn_stats();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(kern::attention_fwd_cudnn(a, kern::AttnOut::kBF16, compute_stream()), cudaSuccess);
  const kern::CudnnAttnStats s2 = kern::attention_cudnn_stats();
  EXPECT_EQ(s2.graphs_built, s1.graphs_built);
  EXPECT_EQ(s2.calls, s1.calls + 3);
  VGEN_CUDA_CHECK(cudaStreamSynchronize(compute_stream()));
}

// Key-chunked cuDNN attention (AttentionKeySplit::kv_chunk): chunks of 128-multiples over the valid
// keys, merged once (attention_merge_parts_bf16), the remainder folded in by the own kernel or run on
// cuDNN and merged (AttentionKeySplit::tail_fold), with and without LSE, excluded keys loud; same bounds
// as one call (the bf16 partials add at most half an ulp before the fp32 merge).
TEST(AttentionCudnnGpu, KeyChunksMatchRef) {
  VGEN_REQUIRE_CUDNN();
  uint32_t seed = 1200;
  for (const Cfg& c : {Cfg{1, 130, 1000, 3, 128, 997}, Cfg{2, 37, 700, 2, 64, 513}, Cfg{1, 300, 5000, 40, 128, 4999}})
    for (int64_t chunk : {int64_t(-1), int64_t(128), int64_t(256), int64_t(1000)}) {
      SCOPED_TRACE(::testing::Message() << "chunk " << chunk);
      const float scale = 1.0f / std::sqrt(float(c.D));
      const Data d = make_data(c, Pad::kLoud, seed += 7);
      const Ref r = reference(c, d, scale);
      Tensor q = device_tensor(d.q, {c.B, c.Sq, c.H, c.D}, DType::kBF16);
      Tensor k = device_tensor(d.k, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
      Tensor v = device_tensor(d.v, {c.B, c.Skv, c.H, c.D}, DType::kBF16);
      for (bool fold : {true, false})
      for (bool with_lse : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "fold " << fold << " lse " << with_lse);
        Tensor out = Tensor::empty({c.B, c.Sq, c.H, c.D}, DType::kBF16, Device::kCUDA);
        Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32, Device::kCUDA);
        const uint64_t calls0 = kern::attention_cudnn_stats().calls;
        const AttentionBackend used = cuda_attention_auto(q, k, v, out, with_lse ? &lse : nullptr, c.nvalid, scale,
                                                          "cudnn", AttentionKeySplit{chunk, fold});
        EXPECT_EQ(used, AttentionBackend::kCudnn);
        // One cuDNN call per key range, but the last (<= 128 keys) when it is folded in: the
        // split really ran (a silent single call would also match).
        const auto plan = attention_kv_plan(c.nvalid, chunk);
        const size_t folded = fold && plan.size() > 1 && plan.back().second <= kern::kAttnTailMaxKeys ? 1 : 0;
        EXPECT_EQ(kern::attention_cudnn_stats().calls - calls0, plan.size() - folded);
        const std::vector<float> o = host_f32(out);
        if (with_lse) {
          const std::vector<float> l = host_f32(lse);
          compare(c, r, o, &l, "chunked");
        } else {
          compare(c, r, o, nullptr, "chunked");
        }
      }
    }
}

// attention_config.backend is honoured: where cuDNN is available, cudnn and auto run on cuDNN and
// native on the own kernel; without it, cudnn is a usage error naming the recipe key, auto runs native.
TEST(AttentionCudnnGpu, RequestedBackendIsHonoured) {
  VGEN_REQUIRE_GPU();
  Tensor t = device_tensor(rounded_bf16(random_vec(4 * 64, 7)), {1, 4, 1, 64}, DType::kBF16);
  Tensor out = Tensor::empty({1, 4, 1, 64}, DType::kBF16, Device::kCUDA);
  EXPECT_EQ(cuda_attention_auto(t, t, t, out, nullptr, 4, 1.0f, "native", kSplit), AttentionBackend::kNative);
  if (kern::attention_cudnn_available()) {
    EXPECT_EQ(cuda_attention_auto(t, t, t, out, nullptr, 4, 1.0f, "cudnn", kSplit), AttentionBackend::kCudnn);
    EXPECT_EQ(cuda_attention_auto(t, t, t, out, nullptr, 4, 1.0f, "auto", kSplit), AttentionBackend::kCudnn);
    VGEN_CUDA_CHECK(cudaStreamSynchronize(compute_stream()));
    return;
  }
  try {
    cuda_attention_auto(t, t, t, out, nullptr, 4, 1.0f, "cudnn", kSplit);
    ADD_FAILURE() << "cudnn accepted in a build without cuDNN";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(e.message().find("attention_config.backend"), std::string::npos) << e.message();
  }
  EXPECT_EQ(cuda_attention_auto(t, t, t, out, nullptr, 4, 1.0f, "auto", kSplit), AttentionBackend::kNative);
}

#else
VGEN_GPU_TESTS_NEED_CUDA(AttentionCudnnGpu)
#endif
