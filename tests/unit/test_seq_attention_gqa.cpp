// Grouped K/V heads in the sequence-parallel attention stack on the host (parallel/): block_attention
// with KVH < H equals it on K/V repeated to H heads (output and LSE, exactly), a head count that does
// not divide fails with kModel, the one-rank attentions (with and without a prefix) take grouped K/V,
// and Ulysses' K/V head count and head groups (ulysses.h). The meshes: tests/parallel/*attention*.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/gqa/repeat_kv_ref.h"
#include "parallel/block_attention.h"
#include "parallel/local_attention.h"
#include "parallel/prefix_attention.h"
#include "parallel/ulysses.h"

using namespace vgen;

namespace {

Tensor random_tensor(const Shape& s, uint64_t seed, float amp) {
  Tensor t = Tensor::empty(s, DType::kF32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-amp, amp);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = d(rng);
  return t;
}

// [B, S, KVH, D] -> [B, S, H, D], head h = KV head h / (H / KVH).
Tensor repeated(const Tensor& kv, int64_t H) {
  Tensor r = Tensor::empty({kv.dim(0), kv.dim(1), H, kv.dim(3)}, DType::kF32);
  kern::repeat_kv_ref(kv.f32(), r.f32(), kv.dim(0) * kv.dim(1), kv.dim(2), H / kv.dim(2), kv.dim(3));
  return r;
}

void expect_same(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.f32()[i], b.f32()[i]) << what << " at " << i;
}

}  // namespace

TEST(SeqAttentionGqa, BlockAttentionReadsGroupedHeads) {
  struct Case {
    int64_t B, Sq, Skv, H, KVH, D, valid;
  };
  for (const Case& c : {Case{1, 7, 9, 8, 2, 5, 9}, Case{2, 5, 11, 6, 3, 4, 7}, Case{1, 3, 4, 4, 1, 8, 0},
                        Case{1, 6, 6, 4, 4, 3, 6}}) {
    const Tensor q = random_tensor({c.B, c.Sq, c.H, c.D}, 1, 2.0f);      // [B, Sq, H, D]
    const Tensor k = random_tensor({c.B, c.Skv, c.KVH, c.D}, 2, 2.0f);   // [B, Skv, KVH, D]
    const Tensor v = random_tensor({c.B, c.Skv, c.KVH, c.D}, 3, 1.0f);
    Tensor out = Tensor::empty(q.shape(), DType::kF32), ref = Tensor::empty(q.shape(), DType::kF32);
    Tensor lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32), ref_lse = Tensor::empty({c.B, c.H, c.Sq}, DType::kF32);
    block_attention(q, k, v, c.valid, out, &lse, AttentionPolicy{});
    block_attention(q, repeated(k, c.H), repeated(v, c.H), c.valid, ref, &ref_lse, AttentionPolicy{});
    expect_same(out, ref, "out");
    expect_same(lse, ref_lse, "lse");
  }
}

TEST(SeqAttentionGqa, KvHeadsNotDividingFail) {
  const Tensor q = Tensor::zeros({1, 4, 4, 2}, DType::kF32), kv = Tensor::zeros({1, 4, 3, 2}, DType::kF32);
  Tensor out = Tensor::empty(q.shape(), DType::kF32);
  try {
    block_attention(q, kv, kv, 4, out, nullptr, AttentionPolicy{});
    FAIL() << "3 K/V heads for 4 query heads did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("K/V heads do not divide"), std::string::npos) << e.message();
  }
  LocalAttention local;
  EXPECT_THROW(local.forward(q, kv, kv, SeqLayout::make(4, 1, 0), AttentionPolicy{}), Error);
  const PrefixKv prefix{Tensor::zeros({1, 2, 3, 2}, DType::kF32), Tensor::zeros({1, 2, 3, 2}, DType::kF32)};
  const Tensor kv2 = Tensor::zeros({1, 4, 2, 2}, DType::kF32);
  EXPECT_THROW(seq_attention_with_prefix(local, q, kv2, kv2, prefix, SeqLayout::make(4, 1, 0), AttentionPolicy{}),
               Error);
}

// One rank: grouped K/V (and a grouped prefix) equal the same call on repeated heads, exactly.
TEST(SeqAttentionGqa, LocalAttentionWithGroupedHeads) {
  const int64_t B = 2, S = 9, P = 4, H = 6, KVH = 2, D = 4;
  const SeqLayout layout = SeqLayout::make(S, 1, 0);
  const Tensor q = random_tensor({B, S, H, D}, 4, 2.0f), k = random_tensor({B, S, KVH, D}, 5, 2.0f),
               v = random_tensor({B, S, KVH, D}, 6, 1.0f);
  const PrefixKv prefix{random_tensor({B, P, KVH, D}, 7, 2.0f), random_tensor({B, P, KVH, D}, 8, 1.0f)};
  const PrefixKv prefix_r{repeated(prefix.k, H), repeated(prefix.v, H)};
  LocalAttention local;
  expect_same(local.forward(q, k, v, layout, AttentionPolicy{}),
              local.forward(q, repeated(k, H), repeated(v, H), layout, AttentionPolicy{}), "local");
  expect_same(seq_attention_with_prefix(local, q, k, v, prefix, layout, AttentionPolicy{}),
              seq_attention_with_prefix(local, q, repeated(k, H), repeated(v, H), prefix_r, layout, AttentionPolicy{}),
              "local with a prefix");
}

TEST(SeqAttentionGqa, UlyssesKvHeads) {
  EXPECT_EQ(ulysses_kv_heads(8, 4), 8);    // Nano at U = 4: 2 K/V heads per rank
  EXPECT_EQ(ulysses_kv_heads(8, 8), 8);    // 1 per rank
  EXPECT_EQ(ulysses_kv_heads(2, 4), 4);    // repeated: 1 per rank
  EXPECT_EQ(ulysses_kv_heads(3, 2), 6);    // repeated to lcm
  EXPECT_EQ(ulysses_kv_heads(40, 4), 40);  // no grouping
  EXPECT_EQ(ulysses_kv_heads(8, 1), 8);
}

// Every query head in exactly one group, in order; each group's K/V heads are those its query heads
// read (uniformly: block_attention's h / (nq / nk)); G groups.
TEST(SeqAttentionGqa, UlyssesHeadGroups) {
  struct Case {
    int64_t hu, ru;
    int G;
  };
  for (const Case& c : {Case{4, 1, 4}, Case{8, 2, 4}, Case{6, 3, 4}, Case{12, 4, 4}, Case{10, 5, 4}, Case{8, 8, 4},
                        Case{5, 5, 4}, Case{2, 1, 2}, Case{16, 2, 3}, Case{3, 1, 1}}) {
    const std::vector<UlyssesHeadGroup> groups = ulysses_head_groups(c.hu, c.ru, c.G);
    ASSERT_EQ(int(groups.size()), c.G) << c.hu << " " << c.ru;
    const int64_t per = c.hu / c.ru;
    int64_t next = 0;
    for (const UlyssesHeadGroup& g : groups) {
      EXPECT_EQ(g.q0, next);
      ASSERT_GE(g.nq, 1);
      ASSERT_GE(g.nk, 1);
      ASSERT_EQ(g.nq % g.nk, 0);
      for (int64_t j = 0; j < g.nq; ++j) EXPECT_EQ(g.k0 + j / (g.nq / g.nk), (g.q0 + j) / per) << c.hu << " " << c.ru;
      next = g.q0 + g.nq;
    }
    EXPECT_EQ(next, c.hu);
  }
}
