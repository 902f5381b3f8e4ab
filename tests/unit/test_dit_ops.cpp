// DiT op references (kernels/{norm,rope,activation,embed,elementwise}) and their Tensor wrappers
// against straightforward loops and known values, on odd shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/random.h"
#include "kernels/activation/activation_ref.h"
#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/embed/patch_ref.h"
#include "kernels/embed/timestep_embed_ref.h"
#include "kernels/norm/norm_ref.h"
#include "kernels/rope/rope_ref.h"
#include "model/wan/dit/rope_tables.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace vgen {
namespace {

std::vector<float> noise(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  randn_fill(v.data(), n, seed);
  return v;
}

void expect_close(const float* a, const float* b, int64_t n, double tol, const char* what) {
  for (int64_t i = 0; i < n; ++i)
    ASSERT_NEAR(a[i], b[i], tol * (1.0 + std::fabs(b[i]))) << what << " at " << i;
}

// Plain double LayerNorm of one row.
void ln_row(const float* x, int64_t D, double eps, std::vector<double>& y) {
  double m = 0, v = 0;
  for (int64_t i = 0; i < D; ++i) m += x[i];
  m /= double(D);
  for (int64_t i = 0; i < D; ++i) v += (x[i] - m) * (x[i] - m);
  v /= double(D);
  y.resize(size_t(D));
  for (int64_t i = 0; i < D; ++i) y[size_t(i)] = (x[i] - m) / std::sqrt(v + eps);
}

TEST(DitOps, LayerNormAffineAndPlain) {
  const int64_t R = 7, D = 37;
  auto x = noise(R * D, 1), w = noise(D, 2), b = noise(D, 3);
  for (auto& e : x) e = e * 3.0f + 1.5f;  // non-zero mean
  std::vector<float> y(size_t(R * D)), y0(size_t(R * D));
  kern::layer_norm_ref(x.data(), w.data(), b.data(), y.data(), R, D, 1e-6f);
  kern::layer_norm_ref(x.data(), nullptr, nullptr, y0.data(), R, D, 1e-6f);
  std::vector<double> ref;
  for (int64_t r = 0; r < R; ++r) {
    ln_row(&x[size_t(r * D)], D, 1e-6, ref);
    for (int64_t i = 0; i < D; ++i) {
      EXPECT_NEAR(y0[size_t(r * D + i)], ref[size_t(i)], 1e-5);
      EXPECT_NEAR(y[size_t(r * D + i)], ref[size_t(i)] * w[size_t(i)] + b[size_t(i)], 1e-5);
    }
  }
  // Tensor wrapper, in place on a view with leading dims.
  Tensor tx = Tensor::from_vector(x, {1, R, D});
  Tensor ty = layer_norm(tx, Tensor::from_vector(w, {D}), Tensor::from_vector(b, {D}), 1e-6f);
  expect_close(ty.f32(), y.data(), R * D, 0, "layer_norm wrapper");
}

TEST(DitOps, LayerNormModulatePerSampleAndPerToken) {
  const int64_t B = 3, S = 5, D = 19, M = 6;
  auto x = noise(B * S * D, 4), mod = noise(B * M * D, 5), tok_mod = noise(B * S * M * D, 6);
  Tensor tx = Tensor::from_vector(x, {B, S, D});
  Tensor y = layer_norm_modulate(tx, Tensor::from_vector(mod, {B, M, D}), 4, 1, 1e-6f);   // shift row 4, scale row 1
  Tensor yt = layer_norm_modulate(tx, Tensor::from_vector(tok_mod, {B, S, M, D}), 0, 3, 1e-6f);
  std::vector<double> n;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      ln_row(&x[size_t((b * S + s) * D)], D, 1e-6, n);
      for (int64_t i = 0; i < D; ++i) {
        const double sh = mod[size_t((b * M + 4) * D + i)], sc = mod[size_t((b * M + 1) * D + i)];
        EXPECT_NEAR(y.f32()[(b * S + s) * D + i], n[size_t(i)] * (1 + sc) + sh, 1e-5);
        const double tsh = tok_mod[size_t(((b * S + s) * M + 0) * D + i)];
        const double tsc = tok_mod[size_t(((b * S + s) * M + 3) * D + i)];
        EXPECT_NEAR(yt.f32()[(b * S + s) * D + i], n[size_t(i)] * (1 + tsc) + tsh, 1e-5);
      }
    }
}

TEST(DitOps, RmsNormWithWeight) {
  const int64_t R = 5, D = 23;
  auto x = noise(R * D, 7), w = noise(D, 8);
  Tensor y = rms_norm(Tensor::from_vector(x, {R, D}), Tensor::from_vector(w, {D}), 1e-6f);
  for (int64_t r = 0; r < R; ++r) {
    double ms = 0;
    for (int64_t i = 0; i < D; ++i) ms += double(x[size_t(r * D + i)]) * x[size_t(r * D + i)];
    const double rs = 1.0 / std::sqrt(ms / double(D) + 1e-6);
    for (int64_t i = 0; i < D; ++i)
      EXPECT_NEAR(y.f32()[r * D + i], x[size_t(r * D + i)] * rs * w[size_t(i)], 1e-5);
  }
}

TEST(DitOps, RopeRotatesInterleavedPairs) {
  const int64_t B = 2, S = 5, H = 3, Dh = 10;
  auto x = noise(B * S * H * Dh, 9);
  std::vector<float> cos(size_t(S * Dh)), sin(size_t(S * Dh)), ang(size_t(S * Dh / 2));
  for (int64_t s = 0; s < S; ++s)
    for (int64_t j = 0; j < Dh / 2; ++j) {
      const double a = 0.3 * double(s + 1) * double(j + 1);
      ang[size_t(s * Dh / 2 + j)] = float(a);
      cos[size_t(s * Dh + 2 * j)] = cos[size_t(s * Dh + 2 * j + 1)] = float(std::cos(a));
      sin[size_t(s * Dh + 2 * j)] = sin[size_t(s * Dh + 2 * j + 1)] = float(std::sin(a));
    }
  Tensor t = Tensor::from_vector(x, {B, S, H, Dh});
  rope_(t, Tensor::from_vector(cos, {S, Dh}), Tensor::from_vector(sin, {S, Dh}));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t j = 0; j < Dh / 2; ++j) {
          const int64_t o = ((b * S + s) * H + h) * Dh + 2 * j;
          const double a = ang[size_t(s * Dh / 2 + j)];
          const double re = x[size_t(o)] * std::cos(a) - x[size_t(o + 1)] * std::sin(a);
          const double im = x[size_t(o)] * std::sin(a) + x[size_t(o + 1)] * std::cos(a);
          EXPECT_NEAR(t.f32()[o], re, 1e-5);
          EXPECT_NEAR(t.f32()[o + 1], im, 1e-5);
        }
}

TEST(DitOps, ActivationsKnownValues) {
  std::vector<float> x = {1.0f, -1.0f, 2.5f, -3.0f, 0.0f};
  Tensor g = gelu_tanh(Tensor::from_vector(x, {5}));
  const double ref[] = {0.8411919906082768, -0.15880800939172324, 2.484915733910001, -0.0036373920817729943, 0.0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(g.f32()[i], ref[i], 2e-7);
  Tensor s = silu(Tensor::from_vector({1.0f, -2.0f}, {2}));
  EXPECT_NEAR(s.f32()[0], 0.7310585786300049, 1e-7);
  EXPECT_NEAR(s.f32()[1], -0.2384058440442351, 1e-7);
  Tensor inplace = Tensor::from_vector(x, {5});
  gelu_tanh_(inplace);
  expect_close(inplace.f32(), g.f32(), 5, 0, "gelu in place");
  // Exact GELU (erf), PyTorch's approximate="none": 0.5·x·(1 + erf(x/√2)) in double.
  Tensor e = Tensor::from_vector(x, {5});
  gelu_erf_(e);
  const double eref[] = {0.8413447460685429, -0.15865525393145707, 2.4844758366855597, -0.00404969409489031, 0.0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(e.f32()[i], eref[i], 2e-7);
}

TEST(DitOps, TimestepEmbeddingFlipAndOddDim) {
  Tensor t = Tensor::from_vector({700.0f, 0.0f}, {2});
  Tensor e = timestep_embedding(t, 8, /*flip=*/true, 0.0f);  // [cos | sin]
  const double ref[] = {-0.8391043258807425, 0.6333192030863108, 0.7539022543433069, 0.7648421872844887,
                        0.5439705233633756,  0.7738906815578801, 0.6569865987187864, 0.6442176872376907};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(e.f32()[i], ref[i], 2e-4) << i;  // fp32 phase of t·freq
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(e.f32()[8 + i], 1.0f);  // t = 0: cos 1
    EXPECT_EQ(e.f32()[12 + i], 0.0f);
  }
  Tensor unflipped = timestep_embedding(t, 9, /*flip=*/false, 0.0f);  // [sin | cos | 0]
  EXPECT_EQ(unflipped.f32()[0], e.f32()[4]);
  EXPECT_EQ(unflipped.f32()[4], e.f32()[0]);
  EXPECT_EQ(unflipped.f32()[8], 0.0f);
}

// The row gather of per-token modulations: row r of the result is table[index[r]], exactly; an
// index out of range is refused.
TEST(DitOps, GatherRows) {
  Tensor table = Tensor::from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor index = Tensor::empty({4}, DType::kI64);
  const int64_t idx[] = {2, 0, 2, 1};
  std::copy(idx, idx + 4, index.data<int64_t>());
  Tensor out = gather_rows(table, index);
  ASSERT_EQ(out.shape(), (Shape{4, 3}));
  const float want[] = {7, 8, 9, 1, 2, 3, 7, 8, 9, 4, 5, 6};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out.f32()[i], want[i]) << i;
  index.data<int64_t>()[3] = 3;
  EXPECT_THROW(gather_rows(table, index), Error);
}

TEST(DitOps, PatchifyOrderAndPadding) {
  const int64_t B = 2, C = 3, T = 3, H = 4, W = 6;
  const std::array<int, 3> p = {1, 2, 2};
  std::vector<float> x(size_t(B * C * T * H * W));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  Tensor tx = Tensor::from_vector(x, {B, C, T, H, W});
  const int64_t S = T * (H / 2) * (W / 2);  // 18
  Tensor all = patchify(tx, p, 0, S);
  Tensor part = patchify(tx, p, 13, 8);  // tokens 13..20: 18..20 are padding
  const int64_t P = C * 4;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t tok = 0; tok < S; ++tok) {
      const int64_t f = tok / 6, h = (tok / 3) % 2, w = tok % 3;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kh = 0; kh < 2; ++kh)
          for (int64_t kw = 0; kw < 2; ++kw) {
            const float want = x[size_t((((b * C + c) * T + f) * H + 2 * h + kh) * W + 2 * w + kw)];
            EXPECT_EQ(all.f32()[(b * S + tok) * P + c * 4 + kh * 2 + kw], want);
          }
    }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t q = 0; q < P; ++q) {
        const float got = part.f32()[(b * 8 + i) * P + q];
        if (13 + i < S)
          EXPECT_EQ(got, all.f32()[(b * S + 13 + i) * P + q]);
        else
          EXPECT_EQ(got, 0.0f);
      }
}

TEST(DitOps, UnpatchifyChannelFastest) {
  const int64_t B = 2, C = 5, T = 2, H = 4, W = 2;
  const std::array<int, 3> p = {1, 2, 2};
  const int64_t S = T * 2 * 1, P = 4 * C;
  std::vector<float> tok(size_t(B * S * P));
  for (size_t i = 0; i < tok.size(); ++i) tok[i] = float(i) * 0.5f;
  Tensor y = unpatchify(Tensor::from_vector(tok, {B, S, P}), p, C, T, H, W);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t f = 0; f < T; ++f)
        for (int64_t hh = 0; hh < H; ++hh)
          for (int64_t ww = 0; ww < W; ++ww) {
            const int64_t t = (f * 2 + hh / 2) * 1 + ww / 2;
            const int64_t q = ((hh % 2) * 2 + ww % 2) * C + c;
            EXPECT_EQ(y.f32()[(((b * C + c) * T + f) * H + hh) * W + ww], tok[size_t((b * S + t) * P + q)]);
          }
}

TEST(DitOps, ElementwiseOps) {
  const int64_t B = 2, S = 3, D = 7, M = 6;
  auto x = noise(B * S * D, 10), y = noise(B * S * D, 11), mod = noise(B * M * D, 12);
  Tensor tx = Tensor::from_vector(x, {B, S, D});
  gated_residual_(tx, Tensor::from_vector(y, {B, S, D}), Tensor::from_vector(mod, {B, M, D}), 5);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t i = 0; i < D; ++i) {
        const size_t k = size_t((b * S + s) * D + i);
        EXPECT_FLOAT_EQ(tx.f32()[k], x[k] + y[k] * mod[size_t((b * M + 5) * D + i)]);
      }
  Tensor r = add_row(Tensor::from_vector(x, {B * S, D}), Tensor::from_vector(std::vector<float>(y.begin(), y.begin() + D), {D}));
  for (int64_t k = 0; k < B * S * D; ++k) EXPECT_FLOAT_EQ(r.f32()[k], x[size_t(k)] + y[size_t(k % D)]);
  Tensor cfg = cfg_combine(Tensor::from_vector(x, {B * S * D}), Tensor::from_vector(y, {B * S * D}), 4.5f);
  for (int64_t k = 0; k < B * S * D; ++k)
    EXPECT_FLOAT_EQ(cfg.f32()[k], y[size_t(k)] + 4.5f * (x[size_t(k)] - y[size_t(k)]));
  Tensor a = Tensor::from_vector(x, {B * S * D});
  add_inplace(a, Tensor::from_vector(y, {B * S * D}));
  for (int64_t k = 0; k < B * S * D; ++k) EXPECT_FLOAT_EQ(a.f32()[k], x[size_t(k)] + y[size_t(k)]);
}

TEST(DitOps, RopeTablesFollowGlobalPositions) {
  WanTransformerConfig cfg;  // Dh = 128: t/h/w = 44/42/42
  cfg.rope_max_seq_len = 64;
  WanRopeTables tables(cfg);
  const int64_t F = 3, R = 5, Cc = 7, S = F * R * Cc;
  Tensor cos, sin, cos2, sin2;
  tables.make(F, R, Cc, 0, S + 3, cos, sin);
  tables.make(F, R, Cc, 40, 20, cos2, sin2);  // a shard: the same rows as the full table
  for (int64_t i = 0; i < 20; ++i)
    for (int d = 0; d < 128; ++d) {
      EXPECT_EQ(cos2.f32()[i * 128 + d], cos.f32()[(40 + i) * 128 + d]);
      EXPECT_EQ(sin2.f32()[i * 128 + d], sin.f32()[(40 + i) * 128 + d]);
    }
  const int64_t tok = 2 * R * Cc + 3 * Cc + 6;  // (f, h, w) = (2, 3, 6)
  auto angle = [](int64_t p, int k, int dim) { return double(p) / std::pow(10000.0, double(2 * k) / double(dim)); };
  for (int k = 0; k < 22; ++k) {
    EXPECT_FLOAT_EQ(cos.f32()[tok * 128 + 2 * k], float(std::cos(angle(2, k, 44))));
    EXPECT_FLOAT_EQ(cos.f32()[tok * 128 + 2 * k + 1], float(std::cos(angle(2, k, 44))));
  }
  for (int k = 0; k < 21; ++k) {
    EXPECT_FLOAT_EQ(sin.f32()[tok * 128 + 44 + 2 * k], float(std::sin(angle(3, k, 42))));
    EXPECT_FLOAT_EQ(sin.f32()[tok * 128 + 86 + 2 * k + 1], float(std::sin(angle(6, k, 42))));
  }
  for (int64_t i = S; i < S + 3; ++i)  // padding: identity rotation
    for (int d = 0; d < 128; ++d) {
      EXPECT_EQ(cos.f32()[i * 128 + d], 1.0f);
      EXPECT_EQ(sin.f32()[i * 128 + d], 0.0f);
    }
  EXPECT_THROW(tables.make(65, 1, 1, 0, 1, cos, sin), Error);
}

TEST(DitOps, RandnIsDeterministicAndStandard) {
  const int64_t n = 200001;
  Tensor a = randn({n}, 42), b = randn({n}, 42), c = randn({n}, 43);
  double s = 0, s2 = 0;
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a.f32()[i], b.f32()[i]);
    same += a.f32()[i] == c.f32()[i];
    s += a.f32()[i];
    s2 += double(a.f32()[i]) * a.f32()[i];
  }
  EXPECT_LT(same, 5);
  EXPECT_NEAR(s / double(n), 0.0, 0.01);
  EXPECT_NEAR(s2 / double(n), 1.0, 0.02);
  std::vector<float> part(7);
  randn_fill(part.data(), 7, 42, 1001);  // any slice on its own
  for (int i = 0; i < 7; ++i) EXPECT_EQ(part[size_t(i)], a.f32()[1001 + i]);
}

}  // namespace
}  // namespace vgen
