// INT8 W8A8 linear reference on the host (label unit): linear_int8_ref (gemm_int8_ref.h) against a
// naive double computation at small odd shapes for every epilogue (none, bias, GELU-tanh + bias,
// bias + residual, residual in place), hand-computed bf16 outputs that show where x_scale, w_scale,
// bias and residual enter and that the result is rounded once to nearest even, the f32 order of the
// epilogue (x_scale before w_scale, no FMA), and the chain from fp32 data through per-row INT8
// quantisation (quantize_rows_int8_ref of quant_ref.h) back to the fp32 product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/bf16.h"
#include "kernels/gemm/gemm_int8_ref.h"
#include "kernels/quant/quant_ref.h"
#include "gemm_int8_case.h"

using namespace vgen::kern;

namespace {

double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }

using vgen::testing::make_int8_gemm_case;
using Case = vgen::testing::Int8GemmCase;

// The naive computation in double against the reference's bf16 output: within one bf16 ulp of the
// exact value (the reference's f32 steps are ~2^-23 each, then one rounding to bf16), plus the f32
// roundings of the terms a residual sum may cancel.
void check_naive(const Case& c, bool bias, bool gelu, bool residual, bool in_place) {
  const int64_t M = c.M, N = c.N, K = c.K;
  std::vector<uint16_t> y(size_t(M * N), 0xFFFF);
  if (in_place) y = c.res;
  linear_int8_ref(c.x8.data(), c.sx.data(), c.w8.data(), c.sw.data(), bias ? c.bias.data() : nullptr,
                  residual ? (in_place ? y.data() : c.res.data()) : nullptr, y.data(), M, N, K, gelu);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += int64_t(c.x8[size_t(m * K + k)]) * c.w8[size_t(n * K + k)];
      const double p = double(acc) * c.sx[size_t(m)] * c.sw[size_t(n)];
      const double b = bias ? bf16_to_f32(c.bias[size_t(n)]) : 0.0;
      const double r = residual ? bf16_to_f32(c.res[size_t(m * N + n)]) : 0.0;
      const double want = (gelu ? gelu_tanh(p + b) : p + b) + r;
      const double got = bf16_to_f32(y[size_t(m * N + n)]);
      const double tol = std::ldexp(std::fabs(want), -8) + std::ldexp(std::fabs(p) + std::fabs(b) + std::fabs(r), -20);
      EXPECT_LE(std::fabs(got - want), tol) << "y[" << m << "," << n << "] bias " << bias << " gelu " << gelu
                                            << " residual " << residual << " in place " << in_place;
    }
}

TEST(GemmInt8Ref, MatchesNaiveDoubleEveryEpilogue) {
  for (const auto& [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{5, 7, 48}, {3, 1, 16}, {9, 33, 144}}) {
    const Case c = make_int8_gemm_case(M, N, K, uint32_t(M * 1000 + N * 10 + K));
    check_naive(c, false, false, false, false);
    check_naive(c, true, false, false, false);
    check_naive(c, false, true, false, false);
    check_naive(c, true, true, false, false);
    check_naive(c, true, false, true, false);
    check_naive(c, false, false, true, false);
    check_naive(c, true, false, true, true);
  }
}

TEST(GemmInt8Ref, InPlaceResidualEqualsSeparate) {
  const Case c = make_int8_gemm_case(5, 7, 48, 3);
  std::vector<uint16_t> sep(c.res.size()), inplace = c.res;
  linear_int8_ref(c.x8.data(), c.sx.data(), c.w8.data(), c.sw.data(), c.bias.data(), c.res.data(), sep.data(), 5, 7,
                  48, false);
  linear_int8_ref(c.x8.data(), c.sx.data(), c.w8.data(), c.sw.data(), c.bias.data(), inplace.data(), inplace.data(),
                  5, 7, 48, false);
  EXPECT_EQ(sep, inplace);
}

// Known integers: row m of x8 is all (m + 1), row n of w8 all −(n + 1) over K = 16, so
// acc[m,n] = −16·(m + 1)·(n + 1); x_scale = {0.5, 0.25}, w_scale = {0.25, 1, 2}, bias = {1.5, −3, 0}.
TEST(GemmInt8Ref, HandComputedScalesBiasResidual) {
  const int64_t M = 2, N = 3, K = 16;
  std::vector<int8_t> x8(size_t(M * K)), w8(size_t(N * K));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) x8[size_t(m * K + k)] = int8_t(m + 1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) w8[size_t(n * K + k)] = int8_t(-(n + 1));
  const std::vector<float> sx = {0.5f, 0.25f}, sw = {0.25f, 1.0f, 2.0f};
  const std::vector<uint16_t> bias = {f32_to_bf16(1.5f), f32_to_bf16(-3.0f), f32_to_bf16(0.0f)};
  std::vector<uint16_t> y(size_t(M * N));
  auto f = [&](size_t i) { return bf16_to_f32(y[i]); };
  // acc = [[−16, −32, −48], [−32, −64, −96]]; ·x_scale[m]·w_scale[n]:
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), nullptr, nullptr, y.data(), M, N, K, false);
  const float plain[6] = {-2.0f, -16.0f, -48.0f, -2.0f, -16.0f, -48.0f};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(f(i), plain[i]) << i;
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), bias.data(), nullptr, y.data(), M, N, K, false);
  const float biased[6] = {-0.5f, -19.0f, -48.0f, -0.5f, -19.0f, -48.0f};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(f(i), biased[i]) << i;
  // Residual 0.25 everywhere, in place: −0.25, −18.75, −47.75 (all bf16-exact).
  y.assign(size_t(M * N), f32_to_bf16(0.25f));
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), bias.data(), y.data(), y.data(), M, N, K, false);
  const float resid[6] = {-0.25f, -18.75f, -47.75f, -0.25f, -18.75f, -47.75f};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(f(i), resid[i]) << i;
  // GELU-tanh of −0.5 and of large negatives (→ −0): one bf16 rounding of the f32 value.
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), bias.data(), nullptr, y.data(), M, N, K, true);
  EXPECT_EQ(y[0], f32_to_bf16(float(gelu_tanh(-0.5))));
  EXPECT_EQ(std::fabs(f(1)), 0.0f);
  EXPECT_EQ(std::fabs(f(2)), 0.0f);
}

// One rounding to bf16, to nearest even: 257 lies halfway between the bf16 neighbours 256 and 258
// (→ 256, even mantissa), 259 between 258 and 260 (→ 260).
TEST(GemmInt8Ref, RoundsOnceToNearestEven) {
  const int64_t K = 16;
  std::vector<int8_t> x8(K, 0), w8(2 * K, 0);
  x8[0] = 1;
  w8[0] = w8[K] = 127;  // both sums 127
  const std::vector<float> sx = {1.0f}, sw = {1.0f, 1.0f};
  const std::vector<uint16_t> bias = {f32_to_bf16(130.0f), f32_to_bf16(132.0f)};
  std::vector<uint16_t> y(2);
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), bias.data(), nullptr, y.data(), 1, 2, K, false);
  EXPECT_EQ(bf16_to_f32(y[0]), 256.0f);  // 127 + 130 = 257
  EXPECT_EQ(bf16_to_f32(y[1]), 260.0f);  // 127 + 132 = 259
}

// The f32 steps in the contract's order: (float(acc)·x_scale)·w_scale, then + bias, each rounded
// (volatile: the expected value must not be contracted into an FMA either).
TEST(GemmInt8Ref, EpilogueOrderInF32) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> acc_d(-(1 << 22), 1 << 22);
  std::uniform_real_distribution<float> s(0.5e-3f, 1.5e-3f), b(-0.5f, 0.5f);
  int reordered_differs = 0;
  for (int t = 0; t < 2000; ++t) {
    const int32_t acc = acc_d(rng);
    const float sx = s(rng), sw = s(rng), bias = b(rng), r = b(rng);
    volatile float p1 = float(acc) * sx;
    volatile float p = p1 * sw;
    volatile float pb = p + bias;
    volatile float pbr = pb + r;
    EXPECT_EQ(linear_int8_value_ref(acc, sx, sw, false, 0.0f, false, false, 0.0f), p);
    EXPECT_EQ(linear_int8_value_ref(acc, sx, sw, true, bias, false, false, 0.0f), pb);
    EXPECT_EQ(linear_int8_value_ref(acc, sx, sw, true, bias, false, true, r), pbr);
    volatile float ss = sx * sw;
    volatile float q = float(acc) * ss;
    reordered_differs += q != p;
  }
  EXPECT_GT(reordered_differs, 0) << "the draw never tells the two orders apart";
  // GELU-tanh in f32 against double: a few f32 ulps (steps and tanhf).
  for (float v : {-5.0f, -1.0f, -0.25f, 0.0f, 0.125f, 0.7f, 3.0f}) {
    const float g = linear_int8_value_ref(1, v, 1.0f, false, 0.0f, true, false, 0.0f);
    EXPECT_NEAR(g, gelu_tanh(v), 4e-7 * (1.0 + std::fabs(v))) << v;
  }
}

// fp32 x and w quantised per row (x8 = rint(x·127/a), scale a/127): the INT8 product is close to the
// fp32 product, so the scales mean what gemm_int8.cuh says (dequantising multipliers).
TEST(GemmInt8Ref, QuantisedRowsApproximateFp32Product) {
  const int64_t M = 6, N = 10, K = 64;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(size_t(M * K)), w(size_t(N * K));
  for (int64_t i = 0; i < M * K; ++i) x[size_t(i)] = u(rng) * float(1 + i / K);  // rows of different ranges
  for (auto& v : w) v = 0.1f * u(rng);
  std::vector<int8_t> x8(x.size()), w8(w.size());
  std::vector<float> sx(static_cast<size_t>(M)), sw(static_cast<size_t>(N));
  quantize_rows_int8_ref(x.data(), false, M, K, K, x8.data(), sx.data());
  quantize_rows_int8_ref(w.data(), false, N, K, K, w8.data(), sw.data());
  std::vector<uint16_t> y(size_t(M * N));
  linear_int8_ref(x8.data(), sx.data(), w8.data(), sw.data(), nullptr, nullptr, y.data(), M, N, K, false);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double exact = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        exact += double(x[size_t(m * K + k)]) * w[size_t(n * K + k)];
        mag += std::fabs(double(x[size_t(m * K + k)]) * w[size_t(n * K + k)]);
      }
      // Each operand's rounding is at most half a step (a/254) of its row: ~1% of Σ|x·w| bounds it.
      EXPECT_NEAR(bf16_to_f32(y[size_t(m * N + n)]), exact, 0.01 * mag + std::ldexp(std::fabs(exact), -8))
          << m << "," << n;
    }
}

}  // namespace
