// kernels/t5 CPU references against direct transcriptions of the transformers formulas.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/t5/bias_attention_ref.h"
#include "kernels/t5/gated_act_ref.h"
#include "kernels/t5/rel_bias_ref.h"
#include "kernels/t5/t5_norm_ref.h"

using namespace vgen::kern;

namespace {
std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
}  // namespace

// The bucket table of umt5-xxl (32 buckets, max distance 128), wan_spec.md §2.3.
TEST(T5Kernels, RelativeBucketTable) {
  auto f = [](int64_t a) {
    if (a < 8) return int(a);
    if (a <= 11) return 8;
    if (a <= 15) return 9;
    if (a <= 22) return 10;
    if (a <= 31) return 11;
    if (a <= 45) return 12;
    if (a <= 63) return 13;
    if (a <= 90) return 14;
    return 15;
  };
  for (int64_t rel = -600; rel <= 600; ++rel) {
    int want = (rel > 0 ? 16 : 0) + f(rel < 0 ? -rel : rel);
    EXPECT_EQ(t5_relative_bucket(rel, true, 32, 128), want) << "rel " << rel;
  }
  // Unidirectional (decoder) form: only rel ≤ 0 distinguishes, all 32 buckets.
  EXPECT_EQ(t5_relative_bucket(5, false, 32, 128), 0);
  EXPECT_EQ(t5_relative_bucket(-5, false, 32, 128), 5);
  EXPECT_EQ(t5_relative_bucket(-1000, false, 32, 128), 31);
}

TEST(T5Kernels, RelBiasTableLayout) {
  const int nb = 8, H = 3;
  std::vector<float> table = randn(size_t(nb * H), 1);
  const int64_t Lq = 5, Lk = 4, R = Lq + Lk - 1;
  std::vector<float> bias(size_t(H * R));
  t5_rel_bias_ref(table.data(), bias.data(), H, -(Lq - 1), R, true, nb, 16);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Lq; ++i)
      for (int64_t j = 0; j < Lk; ++j) {
        int b = t5_relative_bucket(j - i, true, nb, 16);
        EXPECT_EQ(bias[size_t(h * R + (j - i + Lq - 1))], table[size_t(b * H + h)]);
      }
}

TEST(T5Kernels, RmsNorm) {
  for (int64_t dim : {1, 7, 32, 129}) {
    const int64_t rows = 5;
    auto x = randn(size_t(rows * dim), 2, 3.0f), w = randn(size_t(dim), 3);
    std::vector<float> y(x.size());
    t5_rms_norm_ref(x.data(), w.data(), y.data(), rows, dim, 1e-6f);
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < dim; ++i) ss += double(x[size_t(r * dim + i)]) * x[size_t(r * dim + i)];
      double inv = 1.0 / std::sqrt(ss / double(dim) + 1e-6);
      for (int64_t i = 0; i < dim; ++i) {
        double want = w[size_t(i)] * x[size_t(r * dim + i)] * inv;
        EXPECT_NEAR(y[size_t(r * dim + i)], want, 1e-5 * (1 + std::fabs(want)));
      }
    }
  }
}

TEST(T5Kernels, GatedActivations) {
  auto g = randn(1001, 4, 3.0f), l = randn(1001, 5);
  std::vector<float> out(g.size());
  gated_act_ref(g.data(), l.data(), out.data(), int64_t(g.size()), T5Act::kGeluTanh);
  for (size_t i = 0; i < g.size(); ++i) {
    double x = g[i];
    double want = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))) * l[i];
    EXPECT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want)));
  }
  gated_act_ref(g.data(), nullptr, out.data(), int64_t(g.size()), T5Act::kRelu);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(out[i], g[i] > 0 ? g[i] : 0.0f);
  gated_act_ref(g.data(), l.data(), out.data(), int64_t(g.size()), T5Act::kGeluErf);
  for (size_t i = 0; i < g.size(); ++i) {
    double x = g[i], want = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))) * l[i];
    EXPECT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want)));
  }
}

// transformers: scores = q·kᵀ + (bias + (1 − mask)·finfo.min); softmax; · v.
TEST(T5Kernels, AttentionWithBiasAndMask) {
  struct Case { int64_t Lq, Lk, H, D, valid; };
  for (Case c : {Case{7, 5, 3, 5, 3}, Case{1, 1, 1, 1, 1}, Case{9, 9, 2, 8, 9}, Case{4, 6, 4, 3, 1}}) {
    const int64_t W = c.H * c.D, R = c.Lq + c.Lk - 1;
    auto q = randn(size_t(c.Lq * W), 6), k = randn(size_t(c.Lk * W), 7), v = randn(size_t(c.Lk * W), 8);
    auto bias = randn(size_t(c.H * R), 9);
    std::vector<float> out(size_t(c.Lq * W));
    t5_attention_ref(q.data(), k.data(), v.data(), bias.data(), out.data(), c.Lq, c.Lk, c.H, c.D, c.valid);
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t i = 0; i < c.Lq; ++i) {
        std::vector<double> s(size_t(c.Lk));
        double mx = -1e300;
        for (int64_t j = 0; j < c.Lk; ++j) {
          double a = 0;
          for (int64_t d = 0; d < c.D; ++d) a += double(q[size_t(i * W + h * c.D + d)]) * k[size_t(j * W + h * c.D + d)];
          a += bias[size_t(h * R + j - i + c.Lq - 1)] + (j < c.valid ? 0.0 : double(-FLT_MAX));
          s[size_t(j)] = a;
          mx = std::max(mx, a);
        }
        double sum = 0;
        for (auto& x : s) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < c.D; ++d) {
          double o = 0;
          for (int64_t j = 0; j < c.Lk; ++j) o += s[size_t(j)] / sum * v[size_t(j * W + h * c.D + d)];
          EXPECT_NEAR(out[size_t(i * W + h * c.D + d)], o, 1e-5) << "h " << h << " i " << i << " d " << d;
        }
      }
  }
}

TEST(T5Kernels, AttentionWithoutValidKeysIsZero) {
  auto q = randn(6, 1), k = randn(6, 2), v = randn(6, 3);
  std::vector<float> out(6, 1.0f);
  t5_attention_ref(q.data(), k.data(), v.data(), nullptr, out.data(), 3, 3, 1, 2, 0);
  for (float x : out) EXPECT_EQ(x, 0.0f);
}
