// The T5 CUDA kernels (kernels/t5/*.cuh) and their Tensor wrappers (ops/t5_device_ops.h) against
// the CPU references on odd shapes, f32 and bf16 (the whole encoder: test_umt5_gpu.cpp). Outputs
// start as NaN so an unwritten element fails. bf16 bounds follow from the rounding points of each
// kernel (one rounding = 2⁻⁹ relative; the tests allow 2⁻⁸ each).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kernels/t5/bias_attention.cuh"
#include "kernels/t5/bias_attention_ref.h"
#include "kernels/t5/embedding.cuh"
#include "kernels/t5/gated_act.cuh"
#include "kernels/t5/gated_act_ref.h"
#include "kernels/t5/rel_bias.cuh"
#include "kernels/t5/rel_bias_ref.h"
#include "kernels/t5/t5_norm.cuh"
#include "kernels/t5/t5_norm_ref.h"
#include "ops/t5_device_ops.h"
#include "ops/t5_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

const DType kTypes[] = {DType::kF32, DType::kBF16};

void expect_equal(const std::vector<float>& got, const std::vector<float>& ref, const std::string& what) {
  expect_close(got, ref, [](size_t) { return 0.0; }, what);
}

}  // namespace

TEST(T5KernelsGpu, RmsNorm) {
  VGEN_REQUIRE_GPU();
  struct Case {
    int64_t rows, dim;
  };
  uint32_t seed = 1;
  for (Case c : {Case{1, 12}, Case{37, 40}, Case{37, 64}, Case{5, 1003}, Case{3, 4096}})
    for (DType dt : kTypes) {
      SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.dim << " " << dtype_name(dt));
      auto x = maybe_round(random_vec(size_t(c.rows * c.dim), ++seed, -4.0f, 4.0f), dt);
      auto w = maybe_round(random_vec(size_t(c.dim), ++seed, 0.5f, 1.5f), dt);
      std::vector<float> ref(x.size());
      kern::t5_rms_norm_ref(x.data(), w.data(), ref.data(), c.rows, c.dim, 1e-6f);
      Tensor dx = device_tensor(x, {c.rows, c.dim}, dt), dw = device_tensor(w, {c.dim}, dt);
      Tensor dy = poisoned({c.rows, c.dim}, dt);
      VGEN_CUDA_CHECK(kern::t5_rms_norm(dx.raw(), dw.raw(), dy.raw(), ft(dt), c.rows, c.dim, 1e-6f, compute_stream()));
      // bf16: bf16(w · bf16(x·rs)) is two roundings.
      const double rel = dt == DType::kBF16 ? 2 * kUlp : 5e-6;
      auto tol = [&](size_t i) { return rel * std::fabs(ref[i]) + 1e-6; };
      std::vector<float> got = host_f32(dy);
      expect_close(got, ref, tol, "t5_rms_norm");
      // Tensor wrapper (3-D input): the same values.
      Tensor ty = cuda_t5_rms_norm(dx.reshape({1, c.rows, c.dim}), dw, 1e-6f);
      EXPECT_EQ(ty.dtype(), dt);
      EXPECT_EQ(ty.shape(), (Shape{1, c.rows, c.dim}));
      expect_equal(host_f32(ty), got, "cuda_t5_rms_norm");
      // In place (y aliases x).
      VGEN_CUDA_CHECK(kern::t5_rms_norm(dx.raw(), dw.raw(), dx.raw(), ft(dt), c.rows, c.dim, 1e-6f, compute_stream()));
      expect_equal(host_f32(dx), got, "t5_rms_norm in place");
    }
  sync_stream();
}

TEST(T5KernelsGpu, GatedActivations) {
  VGEN_REQUIRE_GPU();
  const int64_t n = 37 * 101;
  uint32_t seed = 100;
  for (kern::T5Act act : {kern::T5Act::kRelu, kern::T5Act::kGeluTanh, kern::T5Act::kGeluErf, kern::T5Act::kSilu})
    for (bool gated : {false, true})
      for (DType dt : kTypes) {
        SCOPED_TRACE(::testing::Message() << "act " << int(act) << " gated " << gated << " " << dtype_name(dt));
        auto g = maybe_round(random_vec(size_t(n), ++seed, -6.0f, 6.0f), dt);
        auto l = maybe_round(random_vec(size_t(n), ++seed, -2.0f, 2.0f), dt);
        std::vector<float> ref(static_cast<size_t>(n));
        kern::gated_act_ref(g.data(), gated ? l.data() : nullptr, ref.data(), n, act);
        Tensor dg = device_tensor(g, {n}, dt), dl = device_tensor(l, {n}, dt), dout = poisoned({n}, dt);
        VGEN_CUDA_CHECK(kern::t5_gated_act(dg.raw(), gated ? dl.raw() : nullptr, dout.raw(), ft(dt), n, act,
                                           compute_stream()));
        // f32: fp32 math (tanhf/erff/expf differ from the host's by a few ulps, amplified in
        // 1 + tanh(u) for u ≪ 0). bf16: the act output and the product are roundings of |ref|;
        // gelu_new's inner roundings move tanh's argument by a few 2⁻⁹ (its slope·|u| ≤ 0.45),
        // an absolute error of 1 + tanh times 0.5·|x|, bounded by 4·2⁻⁸·|x·lin|.
        const double rel = dt == DType::kBF16 ? 3 * kUlp : 1e-5, mix = dt == DType::kBF16 ? 4 * kUlp : 1e-6;
        auto tol = [&](size_t i) {
          const double scale = std::fabs(g[i]) * (gated ? std::fabs(l[i]) : 1.0);
          return rel * std::fabs(ref[i]) + mix * scale + 1e-7;
        };
        std::vector<float> got = host_f32(dout);
        expect_close(got, ref, tol, "t5_gated_act");
        Tensor t = cuda_t5_gated_act(dg.reshape({37, 101}), gated ? dl.reshape({37, 101}) : Tensor(), act);
        EXPECT_EQ(t.shape(), (Shape{37, 101}));
        expect_equal(host_f32(t), got, "cuda_t5_gated_act");
        // In place (out aliases gate).
        VGEN_CUDA_CHECK(kern::t5_gated_act(dg.raw(), gated ? dl.raw() : nullptr, dg.raw(), ft(dt), n, act,
                                           compute_stream()));
        expect_equal(host_f32(dg), got, "t5_gated_act in place");
      }
  sync_stream();
}

// bf16 gelu_new follows transformers' eager op chain exactly (each op rounded to bf16).
TEST(T5KernelsGpu, GeluNewBf16RoundingPoints) {
  VGEN_REQUIRE_GPU();
  const int64_t n = 4099;
  auto g = rounded_bf16(random_vec(size_t(n), 7, -5.0f, 5.0f));
  auto l = rounded_bf16(random_vec(size_t(n), 8, -2.0f, 2.0f));
  Tensor dg = device_tensor(g, {n}, DType::kBF16), dl = device_tensor(l, {n}, DType::kBF16);
  std::vector<float> got = host_f32(cuda_t5_gated_act(dg, dl, kern::T5Act::kGeluTanh));
  auto r = [](float v) { return kern::round_bf16(v); };
  int mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float x = g[size_t(i)];
    float c = r(x * x * x);
    c = r(0.044715f * c);
    c = r(x + c);
    c = r(0.7978845608028654f * c);
    c = r(std::tanh(c));
    c = r(1.0f + c);
    const float want = r(r(r(0.5f * x) * c) * l[size_t(i)]);
    // tanhf on the device may differ from the host's by an ulp of fp32, which can flip one bf16
    // rounding (of tanh: 2⁻⁸ of 1 + tanh, times 0.5·|x·lin|): allow that, and count how often.
    if (got[size_t(i)] != want) {
      ++mismatches;
      const double bound = 2 * kUlp * (std::fabs(want) + std::fabs(x * l[size_t(i)])) + 1e-6;
      EXPECT_LE(std::fabs(got[size_t(i)] - want), bound) << "x " << x;
    }
  }
  EXPECT_LE(mismatches, n / 50) << "bf16 gelu_new differs from the eager op chain too often";
}

TEST(T5KernelsGpu, RelativeBiasGather) {
  VGEN_REQUIRE_GPU();
  const int nb = 32, maxd = 128;
  const int64_t H = 13;
  uint32_t seed = 300;
  for (auto [Lq, Lk] : {std::pair<int64_t, int64_t>{37, 29}, {5, 300}, {1, 1}, {200, 200}})
    for (DType dt : kTypes) {
      SCOPED_TRACE(::testing::Message() << "Lq " << Lq << " Lk " << Lk << " " << dtype_name(dt));
      auto table = maybe_round(random_vec(size_t(nb * H), ++seed, -2.0f, 2.0f), dt);
      const int64_t R = Lq + Lk - 1;
      std::vector<float> ref(size_t(H * R));
      kern::t5_rel_bias_ref(table.data(), ref.data(), H, -(Lq - 1), R, true, nb, maxd);
      Tensor buckets = t5_relative_buckets(Lq, Lk, true, nb, maxd);  // host i64
      ASSERT_EQ(buckets.numel(), R);
      for (int64_t t = 0; t < R; ++t)
        ASSERT_EQ(buckets.data<int64_t>()[t], kern::t5_relative_bucket(t - (Lq - 1), true, nb, maxd));
      Tensor bias = cuda_t5_relative_bias(device_tensor(table, {nb, H}, dt), buckets.to(Device::kCUDA));
      EXPECT_EQ(bias.shape(), (Shape{H, R}));
      EXPECT_EQ(bias.dtype(), DType::kF32);
      expect_equal(host_f32(bias), ref, "t5_rel_bias_gather");
    }
  // An out-of-range bucket is NaN, never an out-of-bounds read.
  Tensor table = device_tensor(random_vec(size_t(4 * 2), 9), {4, 2}, DType::kF32);
  Tensor bad = Tensor::empty({3}, DType::kI64);
  bad.data<int64_t>()[0] = 1, bad.data<int64_t>()[1] = 4, bad.data<int64_t>()[2] = -1;
  std::vector<float> b = host_f32(cuda_t5_relative_bias(table, bad.to(Device::kCUDA)));  // [2, 3]
  EXPECT_FALSE(std::isnan(b[0]));
  EXPECT_TRUE(std::isnan(b[1]) && std::isnan(b[2]) && std::isnan(b[4]) && std::isnan(b[5]));
}

TEST(T5KernelsGpu, EmbeddingGather) {
  VGEN_REQUIRE_GPU();
  const int64_t V = 300, D = 40, rows = 37;
  for (DType dt : kTypes) {
    auto table = maybe_round(random_vec(size_t(V * D), 11), dt);
    Tensor ids = Tensor::empty({rows}, DType::kI64);
    for (int64_t r = 0; r < rows; ++r) ids.data<int64_t>()[r] = (r * 97 + 5) % V;
    ids.data<int64_t>()[0] = 0, ids.data<int64_t>()[rows - 1] = V - 1;
    std::vector<float> ref(size_t(rows * D));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < D; ++c) ref[size_t(r * D + c)] = table[size_t(ids.data<int64_t>()[r] * D + c)];
    Tensor out = cuda_embedding(device_tensor(table, {V, D}, dt), ids.to(Device::kCUDA));
    EXPECT_EQ(out.shape(), (Shape{rows, D}));
    EXPECT_EQ(out.dtype(), dt);
    expect_equal(host_f32(out), ref, std::string("embedding ") + dtype_name(dt));
    // Out-of-range ids are written as NaN.
    ids.data<int64_t>()[3] = V;
    std::vector<float> o = host_f32(cuda_embedding(device_tensor(table, {V, D}, dt), ids.to(Device::kCUDA)));
    EXPECT_TRUE(std::isnan(o[size_t(3 * D)]) && std::isnan(o[size_t(4 * D - 1)]));
    EXPECT_EQ(o[size_t(2 * D)], ref[size_t(2 * D)]);
  }
}

namespace {

// The bf16 attention with the kernel's rounding points and accumulation order (fmaf chains over
// the head dim and over the keys): s = bf16(bf16(q·k) + bf16(bias)), p = bf16(softmax(s)),
// out = bf16(Σ p·v).
std::vector<float> attention_bf16_emulated(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, const float* bias, int64_t Lq, int64_t Lk,
                                           int64_t H, int64_t D, int64_t n) {
  auto r = [](float x) { return kern::round_bf16(x); };
  const int64_t W = H * D, R = Lq + Lk - 1;
  std::vector<float> out(size_t(Lq * W), 0.0f), s(size_t(std::max<int64_t>(n, 1)));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Lq; ++i) {
      if (n == 0) continue;
      float m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        float dot = 0.0f;
        for (int64_t d = 0; d < D; ++d) dot = std::fma(q[size_t(i * W + h * D + d)], k[size_t(j * W + h * D + d)], dot);
        float sc = r(dot);
        if (bias) sc = r(sc + r(bias[h * R + (j - i + Lq - 1)]));
        s[size_t(j)] = sc;
        m = std::max(m, sc);
      }
      float l = 0.0f;
      for (int64_t j = 0; j < n; ++j) l += std::exp(s[size_t(j)] - m);
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0.0f;
        for (int64_t j = 0; j < n; ++j)
          acc = std::fma(r(std::exp(s[size_t(j)] - m) / l), v[size_t(j * W + h * D + d)], acc);
        out[size_t(i * W + h * D + d)] = r(acc);
      }
    }
  return out;
}

}  // namespace

TEST(T5KernelsGpu, BiasAttention) {
  struct Case {
    int64_t Lq, Lk, H, D, valid;
    bool bias;
  };
  VGEN_REQUIRE_GPU();
  const Case cases[] = {
      {37, 37, 13, 40, 29, true},  {37, 37, 13, 64, 29, true},  {37, 37, 13, 64, 37, false},
      {5, 70, 3, 128, 70, true},   {100, 45, 2, 17, 45, true},  {7, 7, 2, 8, 0, true},
      {33, 33, 1, 1, 33, true},    {50, 50, 4, 64, 64, true},  // valid > Lk: clamped to Lk
  };
  uint32_t seed = 500;
  for (const Case& c : cases)
    for (DType dt : kTypes) {
      SCOPED_TRACE(::testing::Message() << "Lq " << c.Lq << " Lk " << c.Lk << " H " << c.H << " D " << c.D
                                        << " valid " << c.valid << " bias " << c.bias << " " << dtype_name(dt));
      const int64_t W = c.H * c.D, R = c.Lq + c.Lk - 1;
      auto q = maybe_round(random_vec(size_t(c.Lq * W), ++seed), dt);
      auto k = maybe_round(random_vec(size_t(c.Lk * W), ++seed), dt);
      auto v = maybe_round(random_vec(size_t(c.Lk * W), ++seed), dt);
      auto bias = random_vec(size_t(c.H * R), ++seed, -2.0f, 2.0f);  // a wrong offset shows
      if (dt == DType::kBF16) bias = rounded_bf16(bias);                // as the bf16 table's values
      Tensor dq = device_tensor(q, {c.Lq, W}, dt), dk = device_tensor(k, {c.Lk, W}, dt);
      Tensor dv = device_tensor(v, {c.Lk, W}, dt), db = device_tensor(bias, {c.H, R}, DType::kF32);
      Tensor dout = poisoned({c.Lq, W}, dt);
      VGEN_CUDA_CHECK(kern::t5_attention(dq.raw(), dk.raw(), dv.raw(), c.bias ? db.f32() : nullptr, dout.raw(), ft(dt),
                                         c.Lq, c.Lk, c.H, c.D, c.valid, compute_stream()));
      std::vector<float> got = host_f32(dout);
      if (dt == DType::kF32) {
        std::vector<float> ref(size_t(c.Lq * W));
        kern::t5_attention_ref(q.data(), k.data(), v.data(), c.bias ? bias.data() : nullptr, ref.data(), c.Lq, c.Lk,
                               c.H, c.D, c.valid);
        expect_close(got, ref, [&](size_t i) { return 1e-5 * std::fabs(ref[i]) + 2e-5; }, "t5_attention f32");
      } else {
        const int64_t n = std::min(c.valid, c.Lk);
        std::vector<float> ref =
            attention_bf16_emulated(q, k, v, c.bias ? bias.data() : nullptr, c.Lq, c.Lk, c.H, c.D, n);
        // Scores match bit for bit; exp / the fp32 sum may move a bf16 rounding of p by one ulp
        // (≤ 2⁻⁸·|v| per flip), and the output rounding is one ulp.
        expect_close(got, ref, [&](size_t i) { return kUlp * std::fabs(ref[i]) + 2 * kUlp; }, "t5_attention bf16");
      }
      // Tensor wrapper: the same values.
      Tensor t = cuda_t5_attention(dq, dk, dv, c.bias ? db : Tensor(), c.H, c.valid);
      EXPECT_EQ(t.shape(), (Shape{c.Lq, W}));
      expect_equal(host_f32(t), got, "cuda_t5_attention");
    }
  sync_stream();
}

#else
VGEN_GPU_TESTS_NEED_CUDA(T5KernelsGpu)
#endif
