// DWDP bookkeeping without a GPU (parallel/dwdp.h): block ownership over a group, and the staging
// slots: every foreign block is copied once per pass into a slot no queued reader still uses, the
// next one is prefetched while the current one runs, and owned blocks never take a slot.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/error.h"
#include "core/on_unwind.h"
#include "parallel/dwdp.h"

using namespace vgen;

TEST(Dwdp, PlanOwnsEveryBlockOnce) {
  for (int size : {1, 2, 3, 4})
    for (int blocks : {1, 2, 5, 40}) {
      std::vector<int> owners(size_t(blocks), 0);
      int total = 0;
      for (int r = 0; r < size; ++r) {
        const DwdpPlan p = DwdpPlan::of(r + size, 2 * size, size);  // second group of the world
        EXPECT_EQ(p.rank, r);
        int owned = 0, next_index = 0;
        for (int b = 0; b < blocks; ++b)
          if (p.owns(b)) {
            ++owners[size_t(b)];
            EXPECT_EQ(p.arena_index(b), next_index++) << "arena positions are dense in block order";
            ++owned;
          }
        EXPECT_EQ(owned, p.owned_count(blocks)) << "size " << size << " blocks " << blocks << " rank " << r;
        total += owned;
      }
      EXPECT_EQ(total, blocks);
      for (int o : owners) EXPECT_EQ(o, 1);
    }
  EXPECT_THROW(DwdpPlan::of(0, 6, 4), Error);  // 4 does not divide 6
}

// Drives the slots over several passes of the block loop the way the model does (acquire, use,
// release) and checks what the device side would do with the copies.
TEST(Dwdp, SlotsCopyEachForeignBlockOncePerPassAheadOfUse) {
  for (int size : {2, 3, 4})
    for (int blocks : {2, 3, 7, 40})
      for (int rank = 0; rank < size; ++rank) {
        SCOPED_TRACE(::testing::Message() << "size " << size << " blocks " << blocks << " rank " << rank);
        const DwdpPlan plan = DwdpPlan::of(rank, size, size);
        DwdpSlots slots(plan, blocks);
        int held[2] = {-1, -1};  // what each slot holds after the queued copies
        int reading = -1;        // slot of the block being computed
        int copies = 0, prefetched_hits = 0;
        const int foreign = blocks - plan.owned_count(blocks);
        for (int pass = 0; pass < 3; ++pass)
          for (int b = 0; b < blocks; ++b) {
            if (plan.owns(b)) continue;
            DwdpSlots::Copy now, next;
            const int s = slots.acquire(b, &now, &next);
            ASSERT_TRUE(s == 0 || s == 1);
            if (now.block >= 0) {
              EXPECT_EQ(now.block, b);
              EXPECT_EQ(now.slot, s);
              held[s] = b;
              ++copies;
            } else {
              EXPECT_EQ(held[s], b) << "no copy issued, so the slot must already hold the block";
              ++prefetched_hits;
            }
            reading = s;
            if (slots.next_foreign(b) < 0) {
              EXPECT_LT(next.block, 0) << "no prefetch crosses the end of a pass";
            }
            if (next.block >= 0) {
              EXPECT_NE(next.slot, reading) << "a prefetch never overwrites the slot being read";
              EXPECT_FALSE(plan.owns(next.block));
              EXPECT_EQ(next.block, slots.next_foreign(b));
              held[next.slot] = next.block;
              ++copies;
            }
          }
        // Up to two foreign blocks stay staged; more are copied once per pass, all but the first
        // of each pass prefetched.
        if (foreign <= 2) {
          EXPECT_EQ(copies, foreign);
        } else {
          EXPECT_EQ(copies, 3 * foreign);
          EXPECT_EQ(prefetched_hits, 3 * (foreign - 1));
        }
      }
}

TEST(Dwdp, OwnedBlocksAreNotStaged) {
  const DwdpPlan plan = DwdpPlan::of(1, 2, 2);
  DwdpSlots slots(plan, 4);
  DwdpSlots::Copy now, next;
  EXPECT_THROW(slots.acquire(1, &now, &next), Error);
  EXPECT_EQ(slots.next_foreign(0), 2);
  EXPECT_EQ(slots.next_foreign(2), -1);
  const DwdpPlan solo = DwdpPlan::of(0, 1, 1);
  EXPECT_EQ(DwdpSlots(solo, 3).next_foreign(0), -1);
}

// The DiT ends a block's use on the unwinding path only through OnUnwind (the normal path calls
// block_end itself, so its errors surface): it must run on an exception and not otherwise.
TEST(Dwdp, OnUnwindRunsOnlyWhenAnExceptionLeaves) {
  int ran = 0;
  { OnUnwind g([&] { ++ran; }); }
  EXPECT_EQ(ran, 0);
  try {
    OnUnwind g([&] { ++ran; });
    throw std::runtime_error("block failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(ran, 1);
  try {  // a throwing cleanup on the unwinding path is swallowed: the first error stands
    OnUnwind g([&] { throw std::logic_error("cleanup failed"); });
    throw std::runtime_error("block failed");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "block failed");
  }
}
