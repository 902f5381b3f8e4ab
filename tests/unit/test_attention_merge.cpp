// attention_merge_parts_ref (kernels/attention/attention_ref.h): attending key ranges separately and
// merging the parts by LSE equals one attention over all keys, and equals the pairwise merge
// (attention_merge_ref) applied part by part; parts with no valid key are ignored.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/attention/attention_ref.h"

using namespace vgen::kern;

namespace {

std::vector<float> random_vec(size_t n, uint32_t seed, float amp) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-amp, amp);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Keys [k0, k0 + len) of k [B, Skv, H, D] as a dense [B, len, H, D].
std::vector<float> key_range(const std::vector<float>& k, int64_t B, int64_t Skv, int64_t X, int64_t k0, int64_t len) {
  std::vector<float> r(size_t(B * len * X));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < len; ++j)
      for (int64_t x = 0; x < X; ++x) r[size_t((b * len + j) * X + x)] = k[size_t((b * Skv + k0 + j) * X + x)];
  return r;
}

}  // namespace

TEST(AttentionMerge, PartsEqualOneAttention) {
  const int64_t B = 2, S = 9, Skv = 40, H = 3, D = 5, X = H * D;
  const float scale = 0.45f;
  const auto q = random_vec(size_t(B * S * X), 1, 2.0f), k = random_vec(size_t(B * Skv * X), 2, 2.0f),
             v = random_vec(size_t(B * Skv * X), 3, 1.0f);
  std::vector<float> want(size_t(B * S * X)), want_lse(size_t(B * H * S));
  attention_ref(q.data(), k.data(), v.data(), want.data(), want_lse.data(), B, S, Skv, H, D, Skv, scale);

  // Ranges of 16, 16, 8 keys, plus a part with no valid key (lse -inf everywhere).
  const int64_t ranges[3][2] = {{0, 16}, {16, 16}, {32, 8}};
  std::vector<std::vector<float>> o(4, std::vector<float>(size_t(B * S * X)));
  std::vector<std::vector<float>> l(4, std::vector<float>(size_t(B * H * S)));
  for (int p = 0; p < 3; ++p) {
    const auto kp = key_range(k, B, Skv, X, ranges[p][0], ranges[p][1]);
    const auto vp = key_range(v, B, Skv, X, ranges[p][0], ranges[p][1]);
    attention_ref(q.data(), kp.data(), vp.data(), o[size_t(p)].data(), l[size_t(p)].data(), B, S, ranges[p][1], H, D,
                  ranges[p][1], scale);
  }
  attention_ref(q.data(), k.data(), v.data(), o[3].data(), l[3].data(), B, S, Skv, H, D, 0, scale);
  const float* parts[4] = {o[0].data(), o[3].data(), o[1].data(), o[2].data()};
  const float* lses[4] = {l[0].data(), l[3].data(), l[1].data(), l[2].data()};
  std::vector<float> got(size_t(B * S * X)), got_lse(size_t(B * H * S));
  attention_merge_parts_ref(parts, lses, 4, got.data(), got_lse.data(), B, S, H, D);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "out " << i;
  for (size_t i = 0; i < got_lse.size(); ++i) ASSERT_NEAR(got_lse[i], want_lse[i], 1e-5) << "lse " << i;

  // The pairwise merge, part by part, gives the same.
  std::vector<float> acc = o[0], acc_lse = l[0];
  for (int p : {3, 1, 2})
    attention_merge_ref(acc.data(), acc_lse.data(), o[size_t(p)].data(), l[size_t(p)].data(), B, S, H, D);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], acc[i], 1e-6) << "pairwise " << i;
}

TEST(AttentionMerge, NoValidKeyAnywhereIsZeroAndMinusInf) {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> o1 = {1, 2}, o2 = {3, 4}, l1 = {ninf}, l2 = {ninf}, out(2, 7.0f), lse(1, 0.0f);
  const float* parts[2] = {o1.data(), o2.data()};
  const float* lses[2] = {l1.data(), l2.data()};
  attention_merge_parts_ref(parts, lses, 2, out.data(), lse.data(), 1, 1, 1, 2);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(lse[0], ninf);
}
