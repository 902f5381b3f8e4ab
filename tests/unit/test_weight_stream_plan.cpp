// The reading plan of the checkpoint loader (dist/weight_stream_plan.h): segments cover exactly what
// is needed, cut on element boundaries, never exceed the segment size, name the right receivers,
// and deal the bytes evenly to the readers.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "dist/weight_stream_plan.h"

using namespace vgen;

namespace {

// Three files: tensors of 2- and 4-byte elements, gaps between some, one odd-sized.
std::vector<PlanFile> files() {
  std::vector<PlanFile> f(3);
  f[0].tensors = {{8, 8 + 4000, 4}, {4008, 4008 + 10002, 2}, {20000, 20000 + 6, 2}};
  f[0].data_size = 20100;
  f[1].tensors = {{0, 70000, 4}, {70000, 70004, 4}};
  f[1].data_size = 70004;
  f[2].tensors = {{0, 2, 2}, {2, 2 + 123456, 2}};
  f[2].data_size = 2 + 123456;
  return f;
}

struct Coverage {
  std::vector<std::vector<std::vector<int>>> who;  // [file][byte] → receivers
};

Coverage cover(const std::vector<PlanFile>& fs, const std::vector<Segment>& segs) {
  Coverage c;
  for (auto& f : fs) c.who.emplace_back(f.data_size);
  for (auto& s : segs)
    for (size_t b = s.begin; b < s.end; ++b) {
      auto& w = c.who[size_t(s.file)][b];
      EXPECT_TRUE(w.empty()) << "byte " << b << " of file " << s.file << " read twice";
      w = s.needers;
    }
  return c;
}

TEST(WeightStreamPlan, CoversEveryNeedOnceWithinTheSegmentSize) {
  const auto fs = files();
  const size_t units = plan_units(fs);
  ASSERT_EQ(units, 3u + 1 + 2 + 1 + 2 + 1);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int ranks = 1 + int(rng() % 5);
    std::vector<NeedFlags> needs(size_t(ranks), NeedFlags(units, 0));
    for (auto& n : needs)
      for (auto& u : n) u = uint8_t(rng() % 3 == 0);
    const size_t cap = 4096 + (rng() % 5) * 1000, gap = rng() % 2 ? 0 : 1 << 20;
    const auto segs = plan_segments(fs, needs, cap, gap);
    const Coverage c = cover(fs, segs);
    size_t u = 0;
    for (size_t fi = 0; fi < fs.size(); ++fi) {
      const size_t whole = u + fs[fi].tensors.size();
      for (size_t t = 0; t < fs[fi].tensors.size(); ++t, ++u) {
        const PlanTensor& pt = fs[fi].tensors[t];
        for (size_t b = pt.begin; b < pt.end; ++b)
          for (int r = 0; r < ranks; ++r) {
            const bool want = needs[size_t(r)][u] || needs[size_t(r)][whole];
            const auto& w = c.who[fi][b];
            if (want) ASSERT_TRUE(std::binary_search(w.begin(), w.end(), r)) << "file " << fi << " byte " << b;
          }
      }
      for (int r = 0; r < ranks; ++r)  // a whole-file need includes the bytes outside tensors
        if (needs[size_t(r)][whole])
          for (size_t b = 0; b < fs[fi].data_size; ++b)
            ASSERT_TRUE(std::binary_search(c.who[fi][b].begin(), c.who[fi][b].end(), r)) << "gap byte " << b;
      u = whole + 1;
    }
    for (auto& s : segs) {
      EXPECT_LE(s.end - s.begin, cap);
      EXPECT_FALSE(s.needers.empty());
      EXPECT_TRUE(std::is_sorted(s.needers.begin(), s.needers.end()));
      EXPECT_GE(s.reader, 0);
      EXPECT_LT(s.reader, ranks);
      // A cut inside a tensor falls on one of its element boundaries.
      for (size_t at : {s.begin, s.end})
        for (auto& pt : fs[size_t(s.file)].tensors)
          if (at > pt.begin && at < pt.end) EXPECT_EQ((at - pt.begin) % pt.elem, 0u) << "cut at " << at;
    }
  }
}

TEST(WeightStreamPlan, DealsBytesEvenly) {
  const auto fs = files();
  const size_t units = plan_units(fs);
  for (int ranks : {2, 3, 4, 8}) {
    // Rank 0 needs everything (the replica leader), the others only file 2 (the transformer).
    std::vector<NeedFlags> needs(size_t(ranks), NeedFlags(units, 0));
    std::fill(needs[0].begin(), needs[0].end(), 1);
    for (int r = 1; r < ranks; ++r) needs[size_t(r)][units - 1] = 1;
    const size_t needed = plan_needed_bytes(fs, needs);
    EXPECT_EQ(needed, 20100u + 70004 + 123458);
    const size_t cap = plan_segment_size(needed, ranks, 1 << 20);
    const auto segs = plan_segments(fs, needs, cap, 1 << 20);
    std::vector<size_t> load(size_t(ranks), 0);
    for (auto& s : segs) load[size_t(s.reader)] += s.end - s.begin;
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, 2 * cap) << ranks << " ranks";
    EXPECT_LE(load[0] * 2, needed) << ranks << " ranks: rank 0 reads at most half";
  }
}

TEST(WeightStreamPlan, SegmentSizeFollowsTheShare) {
  EXPECT_EQ(plan_segment_size(size_t(40) << 30, 8, size_t(64) << 20), size_t(64) << 20);
  EXPECT_EQ(plan_segment_size(1000, 4, size_t(64) << 20), size_t(64) << 10);
  EXPECT_EQ(plan_segment_size(size_t(16) << 20, 4, size_t(64) << 20), size_t(1) << 20);
  EXPECT_EQ(plan_segment_size(size_t(16) << 20, 1, 4096), 4096u);
}

}  // namespace
