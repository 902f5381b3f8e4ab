// The CPU reference of the cuDNN FP8 attention (kernels/attention/attention_cudnn_fp8_ref.h) and the
// host emulation's choice of it (ops/fp8.h fp8_attention_host): per-tensor quantisation over the
// valid tokens only, the LSE of the quantised scores, the e4m3 output a step of e4m3 from the bf16
// one, near the exact attention, no valid key. The GPU comparison is test_attention_cudnn_fp8_gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/attention/attention_cudnn_fp8_ref.h"
#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/attention/attention_ref.h"
#include "kernels/quant/fp8_e4m3_ref.h"
#include "ops/fp8.h"
#include "parallel/block_attention.h"

namespace vgen {
namespace {

constexpr int64_t B = 2, Sq = 19, Skv = 41, H = 3, D = 16, kNv = 37;

std::vector<float> random_vec(size_t n, uint32_t seed, float amp) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-amp, amp);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

struct Data {
  std::vector<float> q = random_vec(size_t(B * Sq * H * D), 1, 2.0f);
  std::vector<float> k = random_vec(size_t(B * Skv * H * D), 2, 2.0f);
  std::vector<float> v = random_vec(size_t(B * Skv * H * D), 3, 3.0f);
  Data() {  // excluded keys NaN: a read of one poisons the rows
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = kNv * H * D; i < Skv * H * D; ++i)
        k[size_t(b * Skv * H * D + i)] = v[size_t(b * Skv * H * D + i)] = std::numeric_limits<float>::quiet_NaN();
  }
};

struct Result {
  std::vector<float> o = std::vector<float>(size_t(B * Sq * H * D));
  std::vector<float> lse = std::vector<float>(size_t(B * H * Sq));
};

Result run_ref(const Data& d, int64_t nv, bool e4m3_out, int64_t key_tile = 128) {
  Result r;
  kern::attention_cudnn_fp8_ref(d.q.data(), d.k.data(), d.v.data(), r.o.data(), r.lse.data(), B, Sq, Skv, H, D, nv,
                                0.25f, {e4m3_out, key_tile});
  return r;
}

TEST(AttentionCudnnFp8Ref, QuantisesPerTensorOverTheValidTokens) {
  const Data d;
  std::vector<uint8_t> k8(size_t(B * kNv * H * D));
  const float amax = kern::cudnn_fp8_quantize_ref(d.k.data(), B, Skv, kNv, H * D, k8.data());
  float expect = 0.0f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < kNv * H * D; ++i) expect = std::max(expect, std::fabs(d.k[size_t(b * Skv * H * D + i)]));
  EXPECT_EQ(amax, expect);
  const float mul = kern::fp8_quant_mul(amax);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < kNv * H * D; ++i)
      ASSERT_EQ(k8[size_t(b * kNv * H * D + i)], kern::fp8_e4m3_encode(d.k[size_t(b * Skv * H * D + i)] * mul));
  // The largest magnitude lands on 448 exactly.
  bool top = false;
  for (uint8_t x : k8) top |= std::fabs(kern::fp8_e4m3_decode(x)) == kern::kFp8E4M3Max;
  EXPECT_TRUE(top);
}

TEST(AttentionCudnnFp8Ref, NearTheExactAttentionWithTheLseOfTheQuantisedScores) {
  const Data d;
  const Result e4m3 = run_ref(d, kNv, true), bf16 = run_ref(d, kNv, false);
  Result exact;
  kern::attention_ref(d.q.data(), d.k.data(), d.v.data(), exact.o.data(), exact.lse.data(), B, Sq, Skv, H, D, kNv,
                      0.25f);
  for (float x : e4m3.o) ASSERT_TRUE(std::isfinite(x));
  std::vector<float> own(exact.o.size());
  kern::attention_fp8_ref(d.q.data(), d.k.data(), d.v.data(), own.data(), nullptr, B, Sq, Skv, H, D, kNv, 0.25f);
  const double e_bf16 = rel_l2(bf16.o, exact.o), e_e4m3 = rel_l2(e4m3.o, exact.o), e_own = rel_l2(own, exact.o);
  std::printf("[cudnn fp8 ref] vs exact: bf16 out %.3e, e4m3 out %.3e (the own kernel's reference %.3e)\n", e_bf16,
              e_e4m3, e_own);
  // Diffuse attention over uniform data (small outputs): several % for any e4m3 attention; within
  // half as much again as the own kernel's numerics (per-block Q/K scales, per-channel V scales).
  EXPECT_LE(e_bf16, 1.5 * e_own);
  EXPECT_LE(e_e4m3, 1.5 * e_own);
  EXPECT_LE(e_e4m3, 8e-2);
  EXPECT_GT(e_e4m3, e_bf16);  // the e4m3 output adds its rounding
  EXPECT_GT(e_bf16, 1e-4);    // quantised at all
  EXPECT_EQ(e4m3.lse, bf16.lse);  // the output type does not touch the scores
  // Each e4m3 output is bf16's rounded to e4m3 at scale 224/amax(v): within one e4m3 step.
  for (size_t i = 0; i < e4m3.o.size(); ++i)
    ASSERT_LE(std::fabs(e4m3.o[i] - bf16.o[i]), std::ldexp(std::fabs(bf16.o[i]), -4) + 1e-3f) << i;
  // The LSE of the dequantised scores of K − mean, recomputed here, plus the mean's share: the LSE
  // of the true scores up to the quantisation.
  std::vector<uint8_t> q8(d.q.size()), k8(size_t(B * kNv * H * D));
  std::vector<float> km(size_t(B * H * D)), ks(k8.size());
  kern::cudnn_fp8_key_mean_ref(d.k.data(), B, Skv, kNv, H, D, km.data());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < kNv * H * D; ++i)
      ks[size_t(b * kNv * H * D + i)] = d.k[size_t(b * Skv * H * D + i)] - km[size_t(b * H * D + i % (H * D))];
  const float dq = kern::fp8_dequant_mul(kern::cudnn_fp8_quantize_ref(d.q.data(), B, Sq, Sq, H * D, q8.data()));
  const float dk = kern::fp8_dequant_mul(kern::cudnn_fp8_quantize_ref(ks.data(), B, kNv, kNv, H * D, k8.data()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        std::vector<double> s;
        for (int64_t j = 0; j < kNv; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < D; ++c)
            acc += double(kern::fp8_e4m3_decode(q8[size_t(((b * Sq + i) * H + h) * D + c)])) *
                   kern::fp8_e4m3_decode(k8[size_t(((b * kNv + j) * H + h) * D + c)]);
          s.push_back(acc * 0.25 * dq * dk);
        }
        const double m = *std::max_element(s.begin(), s.end());
        double l = 0, corr = 0;
        for (double x : s) l += std::exp(x - m);
        for (int64_t c = 0; c < D; ++c)
          corr += double(d.q[size_t(((b * Sq + i) * H + h) * D + c)]) * km[size_t((b * H + h) * D + c)];
        EXPECT_NEAR(e4m3.lse[size_t((b * H + h) * Sq + i)], m + std::log(l) + 0.25 * corr, 1e-4);
        EXPECT_NEAR(e4m3.lse[size_t((b * H + h) * Sq + i)], exact.lse[size_t((b * H + h) * Sq + i)], 0.25);
      }
}

// The key tile moves only the rounding of P (one e4m3 step of a probability at most): outputs close,
// the LSE the same up to fp32 rounding; one tile holding every key is the whole-row form.
TEST(AttentionCudnnFp8Ref, KeyTilesChangeOnlyTheRoundingOfP) {
  const Data d;
  const Result t128 = run_ref(d, kNv, false), whole = run_ref(d, kNv, false, 0), t8 = run_ref(d, kNv, false, 8);
  const Result t64 = run_ref(d, kNv, false, 64);
  EXPECT_EQ(t64.o, whole.o);  // 37 keys: one tile either way
  EXPECT_EQ(t128.o, whole.o);
  EXPECT_GT(rel_l2(t8.o, whole.o), 0.0);
  EXPECT_LE(rel_l2(t8.o, whole.o), 5e-2);
  for (size_t i = 0; i < whole.lse.size(); ++i)
    ASSERT_NEAR(t8.lse[i], whole.lse[i], 1e-5f * (1 + std::fabs(whole.lse[i])));
}

// K's mean: a common offset of every key changes neither the output (softmax is invariant to it)
// nor its quantisation (taken out before the e4m3 step), and the LSE moves by exactly its share.
TEST(AttentionCudnnFp8Ref, KeyOffsetIsTakenOut) {
  const Data d;
  Data shifted = d;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < kNv; ++j)
      for (int64_t c = 0; c < H * D; ++c) shifted.k[size_t((b * Skv + j) * H * D + c)] += c % 2 ? 8.0f : -4.0f;
  const Result r = run_ref(d, kNv, true), rs = run_ref(shifted, kNv, true);
  EXPECT_LE(rel_l2(rs.o, r.o), 2e-2);  // only the mean's rounding and K's new amax differ
  Result exact, exact_shifted;
  kern::attention_ref(d.q.data(), d.k.data(), d.v.data(), exact.o.data(), exact.lse.data(), B, Sq, Skv, H, D, kNv,
                      0.25f);
  kern::attention_ref(shifted.q.data(), shifted.k.data(), shifted.v.data(), exact_shifted.o.data(),
                      exact_shifted.lse.data(), B, Sq, Skv, H, D, kNv, 0.25f);
  for (size_t i = 0; i < r.lse.size(); ++i)
    ASSERT_NEAR(rs.lse[i] - r.lse[i], exact_shifted.lse[i] - exact.lse[i], 0.05) << i;
}

TEST(AttentionCudnnFp8Ref, NoValidKey) {
  const Data d;
  const Result r = run_ref(d, 0, true);
  for (float x : r.o) ASSERT_EQ(x, 0.0f);
  for (float x : r.lse) ASSERT_EQ(x, -std::numeric_limits<float>::infinity());
}

// The host emulation follows the device path attention_config.backend selects.
TEST(AttentionCudnnFp8Ref, HostEmulationFollowsTheBackend) {
  const Data d;
  Tensor q = Tensor::from_vector(d.q, {B, Sq, H, D}), k = Tensor::from_vector(d.k, {B, Skv, H, D});
  Tensor v = Tensor::from_vector(d.v, {B, Skv, H, D});
  Tensor out = Tensor::empty({B, Sq, H, D}, DType::kF32), lse = Tensor::empty({B, H, Sq}, DType::kF32);
  fp8_attention_host(q, k, v, out, &lse, kNv, 0.25f, false, AttentionBackend::kCudnn);
  const Result r = run_ref(d, kNv, true);
  EXPECT_TRUE(std::equal(r.o.begin(), r.o.end(), out.f32()));
  EXPECT_TRUE(std::equal(r.lse.begin(), r.lse.end(), lse.f32()));
  std::vector<float> own(r.o.size());
  kern::attention_fp8_ref(d.q.data(), d.k.data(), d.v.data(), own.data(), nullptr, B, Sq, Skv, H, D, kNv, 0.25f);
  for (AttentionBackend b : {AttentionBackend::kAuto, AttentionBackend::kNative}) {
    fp8_attention_host(q, k, v, out, nullptr, kNv, 0.25f, false, b);
    EXPECT_TRUE(std::equal(own.begin(), own.end(), out.f32())) << attention_backend_name(b);
  }
  // The sequence-parallel attentions' block step (parallel/block_attention.h) passes the policy's
  // backend on: the model's fp8 self-attention on the host under attention_config.backend cudnn.
  Tensor q2 = Tensor::from_vector(d.q, {B, Sq, H, D}), k2 = Tensor::from_vector(d.k, {B, Skv, H, D});
  Tensor v2 = Tensor::from_vector(d.v, {B, Skv, H, D});
  Tensor o2 = Tensor::empty({B, Sq, H, D}, DType::kF32);
  block_attention(q2, k2, v2, kNv, o2, nullptr, AttentionPolicy{AttentionBackend::kCudnn, {}, true, QkFormat::kE4m3});
  std::vector<float> expect(r.o.size());
  kern::attention_cudnn_fp8_ref(d.q.data(), d.k.data(), d.v.data(), expect.data(), nullptr, B, Sq, Skv, H, D, kNv,
                                1.0f / std::sqrt(float(D)));
  EXPECT_TRUE(std::equal(expect.begin(), expect.end(), o2.f32()));
}

}  // namespace
}  // namespace vgen
