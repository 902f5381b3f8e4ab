// The GQA ops on the host (ops/gqa): repeat_kv_heads exactly, and gqa_attention (causal and full,
// grouped heads, a valid-key count, causal offsets including rows that see no key) against the block
// attention of lib/parallel on repeated heads, one query row at a time for the causal mask.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/gqa/gqa_ops.h"
#include "parallel/block_attention.h"

namespace vgen {
namespace {

Tensor random_tensor(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(size_t(shape_numel(s)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(v, s);
}

double max_abs(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(double(a.f32()[i]) - double(b.f32()[i])));
  return m;
}

TEST(Cosmos3Gqa, RepeatKvHeads) {
  const Tensor kv = random_tensor({2, 5, 3, 7}, 1);  // [B, S, KVH, D]
  const Tensor r = repeat_kv_heads(kv, 4);           // [B, S, 12, D]
  ASSERT_EQ(r.shape(), Shape({2, 5, 12, 7}));
  for (int64_t row = 0; row < 10; ++row)
    for (int64_t h = 0; h < 12; ++h)
      for (int64_t d = 0; d < 7; ++d)
        ASSERT_EQ(r.f32()[(row * 12 + h) * 7 + d], kv.f32()[(row * 3 + h / 4) * 7 + d]);
  EXPECT_EQ(repeat_kv_heads(kv, 1).raw(), kv.raw());  // no groups: the same tensor
}

// gqa_attention against block_attention over repeated heads, each query row over its visible keys.
void check_against_block(int64_t B, int64_t Sq, int64_t Skv, int64_t H, int64_t KVH, int64_t D, int64_t valid,
                         bool causal, int64_t offset) {
  SCOPED_TRACE(testing::Message() << "B " << B << " Sq " << Sq << " Skv " << Skv << " H " << H << " KVH " << KVH
                                  << " D " << D << " valid " << valid << " causal " << causal << " offset " << offset);
  const Tensor q = random_tensor({B, Sq, H, D}, 2), k = random_tensor({B, Skv, KVH, D}, 3),
               v = random_tensor({B, Skv, KVH, D}, 4);
  const Tensor got = gqa_attention(q, k, v, valid, causal, offset);  // [B, Sq, H, D]
  const Tensor kr = repeat_kv_heads(k, H / KVH), vr = repeat_kv_heads(v, H / KVH);
  Tensor ref = Tensor::zeros({B, Sq, H, D}, DType::kF32);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      const int64_t seen = causal ? std::clamp<int64_t>(i + offset + 1, 0, std::min(valid, Skv)) : valid;
      const Tensor qi = q.reshape({B * Sq, H * D}).narrow(b * Sq + i, 1).reshape({1, 1, H, D});
      Tensor oi = ref.reshape({B * Sq, H * D}).narrow(b * Sq + i, 1).reshape({1, 1, H, D});
      const Tensor kb = kr.narrow(b, 1), vb = vr.narrow(b, 1);
      block_attention(qi, kb, vb, seen, oi, nullptr, AttentionPolicy{});
    }
  EXPECT_LE(max_abs(got, ref), 2e-6);
}

TEST(Cosmos3Gqa, CausalMatchesBlockAttention) {
  check_against_block(1, 19, 19, 4, 2, 32, 19, true, 0);
  check_against_block(2, 7, 7, 6, 1, 8, 7, true, 0);
  check_against_block(1, 5, 12, 4, 4, 16, 12, true, 7);  // queries after a prefix of 7 keys
  check_against_block(1, 6, 6, 4, 2, 8, 4, true, 0);     // valid keys fewer than the rows
}

TEST(Cosmos3Gqa, FullMatchesBlockAttention) {
  check_against_block(1, 9, 23, 8, 2, 16, 23, false, 0);
  check_against_block(2, 4, 10, 3, 3, 5, 6, false, 0);
}

TEST(Cosmos3Gqa, RowsWithoutKeysAreZero) {
  const Tensor q = random_tensor({1, 4, 2, 8}, 5), k = random_tensor({1, 4, 1, 8}, 6), v = random_tensor({1, 4, 1, 8}, 7);
  const Tensor o = gqa_attention(q, k, v, 4, true, -2);  // rows 0 and 1 see no key
  for (int64_t e = 0; e < 2 * 2 * 8; ++e) EXPECT_EQ(o.f32()[e], 0.0f);
  for (int64_t e = 2 * 2 * 8; e < o.numel(); ++e) EXPECT_TRUE(std::isfinite(o.f32()[e]));
}

}  // namespace
}  // namespace vgen
