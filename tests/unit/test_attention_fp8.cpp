// The FP8 attention reference (attention_fp8_ref.h), which is also the CPU emulation of precision
// fp8: close to exact attention on random data, the key smoothing removes a common key offset
// (outputs unchanged, the LSE shifted by exactly scale·q·offset), padding keys are never read, and
// a row without keys is 0 with LSE −inf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/attention/attention_ref.h"

using namespace vgen::kern;

namespace {

std::vector<float> rnd(size_t n, uint32_t seed, float amp) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-amp, amp);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& r) {
  double n = 0, d = 0;
  for (size_t i = 0; i < a.size(); ++i) n += (a[i] - double(r[i])) * (a[i] - double(r[i])), d += double(r[i]) * r[i];
  return std::sqrt(n / d);
}

struct Case {
  int64_t B, Sq, Skv, H, D, nvalid;
  float amp;
};

TEST(AttentionFp8Ref, CloseToExact) {
  // e4m3 keeps 3 mantissa bits: each element of Q, K, V, P is off by up to 2⁻⁴ relative, and the
  // errors average over the D-long dot products and the keys; a few percent overall.
  for (const Case& c : {Case{1, 150, 300, 2, 64, 300, 1.0f}, Case{2, 40, 129, 3, 12, 100, 2.0f},
                        Case{1, 260, 260, 1, 128, 260, 1.0f}}) {
    const size_t nq = size_t(c.B * c.Sq * c.H * c.D), nk = size_t(c.B * c.Skv * c.H * c.D);
    auto q = rnd(nq, 1, c.amp), k = rnd(nk, 2, c.amp), v = rnd(nk, 3, 1.0f);
    std::vector<float> o(nq), e(nq), l(static_cast<size_t>(c.B * c.H * c.Sq)), le(l.size());
    const float scale = 1.0f / std::sqrt(float(c.D));
    attention_fp8_ref(q.data(), k.data(), v.data(), o.data(), l.data(), c.B, c.Sq, c.Skv, c.H, c.D, c.nvalid, scale);
    attention_ref(q.data(), k.data(), v.data(), e.data(), le.data(), c.B, c.Sq, c.Skv, c.H, c.D, c.nvalid, scale);
    EXPECT_LT(rel_l2(o, e), 0.06) << "D " << c.D;
    EXPECT_GT(rel_l2(o, e), 1e-4) << "no quantisation happened";
    double lmax = 0;
    for (size_t i = 0; i < l.size(); ++i) lmax = std::max(lmax, std::fabs(double(l[i]) - le[i]));
    EXPECT_LT(lmax, 0.1) << "LSE of the true scores";
  }
}

TEST(AttentionFp8Ref, SmoothingRemovesKeyOffset) {
  const int64_t B = 1, S = 200, H = 2, D = 32;
  const size_t n = size_t(B * S * H * D);
  auto q = rnd(n, 4, 1.0f), k = rnd(n, 5, 1.0f), v = rnd(n, 6, 1.0f);
  // An offset that is a power of two and keys on a coarse grid keep k + c − mean exact in float.
  for (auto& x : k) x = std::round(x * 64.0f) / 64.0f;
  std::vector<float> kc = k, offs(size_t(H * D));
  for (size_t i = 0; i < offs.size(); ++i) offs[i] = (i % 3 == 0) ? 4.0f : -2.0f;
  for (size_t i = 0; i < n; ++i) kc[i] += offs[i % offs.size()];
  std::vector<float> o1(n), o2(n), l1(static_cast<size_t>(B * H * S)), l2(l1.size());
  const float scale = 0.25f;
  attention_fp8_ref(q.data(), k.data(), v.data(), o1.data(), l1.data(), B, S, S, H, D, S, scale);
  attention_fp8_ref(q.data(), kc.data(), v.data(), o2.data(), l2.data(), B, S, S, H, D, S, scale);
  EXPECT_LT(rel_l2(o2, o1), 1e-5);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < S; ++i) {
      double qc = 0;
      for (int64_t d = 0; d < D; ++d) qc += double(q[size_t((i * H + h) * D + d)]) * offs[size_t(h * D + d)];
      EXPECT_NEAR(l2[size_t(h * S + i)] - l1[size_t(h * S + i)], scale * qc, 1e-3) << "h " << h << " i " << i;
    }
}

TEST(AttentionFp8Ref, PaddingAndEmptyRows) {
  const int64_t B = 1, Sq = 9, Skv = 20, H = 1, D = 8;
  auto q = rnd(size_t(Sq * D), 7, 1.0f), k = rnd(size_t(Skv * D), 8, 1.0f), v = rnd(size_t(Skv * D), 9, 1.0f);
  std::vector<float> o(q.size()), l(static_cast<size_t>(Sq)), r(q.size()), rl(l.size());
  attention_fp8_ref(q.data(), k.data(), v.data(), r.data(), rl.data(), B, Sq, Skv, H, D, 13, 0.3f);
  for (size_t j = 13 * D; j < k.size(); ++j) k[j] = v[j] = std::numeric_limits<float>::quiet_NaN();
  attention_fp8_ref(q.data(), k.data(), v.data(), o.data(), l.data(), B, Sq, Skv, H, D, 13, 0.3f);
  EXPECT_EQ(o, r);
  EXPECT_EQ(l, rl);
  attention_fp8_ref(q.data(), k.data(), v.data(), o.data(), l.data(), B, Sq, Skv, H, D, 0, 0.3f);
  for (float x : o) EXPECT_EQ(x, 0.0f);
  for (float x : l) EXPECT_TRUE(std::isinf(x) && x < 0);
}

}  // namespace
