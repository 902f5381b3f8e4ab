// attention_kv_plan (ops/attention_backend.h): the key ranges of a chunked cuDNN attention cover
// [0, num_valid) exactly, in order, every range but the last a multiple of 128 keys, at most 16.
#include <gtest/gtest.h>

#include "ops/attention_backend.h"

using namespace vgen;

namespace {

void check_plan(int64_t n, int64_t chunk) {
  SCOPED_TRACE(::testing::Message() << "num_valid " << n << " chunk " << chunk);
  const auto plan = attention_kv_plan(n, chunk);
  ASSERT_FALSE(plan.empty());
  ASSERT_LE(plan.size(), 16u);
  int64_t next = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i].first, next);
    EXPECT_GT(plan[i].second, 0);
    if (i + 1 < plan.size()) {
      EXPECT_EQ(plan[i].second % 128, 0) << "range " << i;
    }
    next += plan[i].second;
  }
  EXPECT_EQ(next, n);
}

}  // namespace

TEST(AttentionPlan, CoversTheKeysIn128Multiples) {
  for (int64_t n : {1, 127, 128, 129, 997, 4095, 4096, 4097, 32760, 75600, 75648, 1000003})
    for (int64_t chunk : {-1, 0, 1, 128, 1000, 15200, 100000}) check_plan(n, chunk);
}

TEST(AttentionPlan, Policy) {
  // auto: the 128-multiple part and the remainder, only for long key ranges.
  EXPECT_EQ(attention_kv_plan(75600, -1), (std::vector<std::pair<int64_t, int64_t>>{{0, 75520}, {75520, 80}}));
  EXPECT_EQ(attention_kv_plan(75648, -1).size(), 1u);
  EXPECT_EQ(attention_kv_plan(4000, -1).size(), 1u);
  // 0: never split; N: chunks of about N keys.
  EXPECT_EQ(attention_kv_plan(75600, 0).size(), 1u);
  EXPECT_EQ(attention_kv_plan(75600, 19000).size(), 5u);  // 3 x 18944 + 18688, then the 80 left
  EXPECT_EQ(attention_kv_plan(1000, 1000).size(), 1u);
  EXPECT_EQ(attention_kv_plan(1000, 128).size(), 8u);  // 7 x 128 + 104
}
