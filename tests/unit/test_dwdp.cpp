// DWDP bookkeeping without a GPU (parallel/dwdp.h): the slice layout over a group (every slice of
// every block held exactly once, arenas dense, whole blocks for two ranks, the copy order free of
// many-to-one steps), and the staging slots: every block not run in place is assembled once per
// pass into a slot no queued reader still uses, the next one prefetched while the current one runs.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/on_unwind.h"
#include "parallel/dwdp.h"

using namespace vgen;

TEST(Dwdp, PlanPlacesTheRankInItsGroup) {
  for (int size : {1, 2, 3, 4})
    for (int r = 0; r < size; ++r) {
      const DwdpPlan p = DwdpPlan::of(r + size, 2 * size, size);  // second group of the world
      EXPECT_EQ(p.rank, r);
      EXPECT_EQ(p.size, size);
      EXPECT_EQ(p.active(), size > 1);
    }
  EXPECT_THROW(DwdpPlan::of(0, 6, 4), Error);  // 4 does not divide 6
}

TEST(Dwdp, LayoutHoldsEverySliceOnceInDenseArenas) {
  const size_t MiB = size_t(1) << 20;
  for (int size : {1, 2, 3, 4, 8})
    for (int blocks : {1, 2, 5, 40})
      for (size_t bytes : {size_t(256), size_t(1000), 3 * MiB + 512, 716 * MiB + 4096}) {
        SCOPED_TRACE(::testing::Message() << "size " << size << " blocks " << blocks << " bytes " << bytes);
        const DwdpLayout l(size, blocks, bytes, 256);
        const size_t sl = l.slice_bytes();
        EXPECT_EQ(sl % 256, 0u);
        EXPECT_GE(l.staged_bytes(), bytes);
        EXPECT_LT(l.staged_bytes() - bytes, sl) << "at most the last slice is padded";
        if (size <= 2) {
          EXPECT_EQ(l.slices(), 1) << "two ranks: whole blocks";
          for (int b = 0; b < blocks; ++b) {
            EXPECT_TRUE(l.in_place(b, b % size));
            if (size == 2) EXPECT_FALSE(l.in_place(b, 1 - b % 2));
          }
        } else {
          EXPECT_LE(sl, kDwdpMaxSlice);
          if (bytes >= size_t(size) * kDwdpMaxSlice) {
            EXPECT_EQ(sl, kDwdpMaxSlice);
            EXPECT_GE(l.slices(), size) << "a large block spans the whole group";
          }
          if (l.slices() > 1)
            for (int b = 0; b < blocks; ++b)
              for (int r = 0; r < size; ++r) EXPECT_FALSE(l.in_place(b, r)) << "no rank holds a sliced block whole";
        }
        size_t total = 0;
        for (int r = 0; r < size; ++r) {
          size_t next = 0;  // the rank's arena: its slices of block 0, then block 1, ...
          for (int b = 0; b < blocks; ++b) {
            EXPECT_EQ(l.arena_offset(b, r), next);
            int n = 0;
            for (int j = 0; j < l.slices(); ++j)
              if (l.owner(b, j) == r) {
                if (n == 0) EXPECT_EQ(l.first_slice(b, r), j);
                EXPECT_EQ(j, l.first_slice(b, r) + n * size) << "every N-th slice: one strided copy";
                ++n;
              }
            EXPECT_EQ(n, l.count(b, r));
            next += size_t(n) * sl;
          }
          EXPECT_EQ(l.arena_bytes(r), next);
          total += next;
        }
        EXPECT_EQ(total, size_t(blocks) * l.staged_bytes()) << "each slice held exactly once";
        // Balanced: arenas differ by at most one slice per block.
        for (int r = 1; r < size; ++r) {
          const size_t a = l.arena_bytes(0), c = l.arena_bytes(r);
          EXPECT_LE(a > c ? a - c : c - a, size_t(blocks) * sl);
        }
      }
}

// Every reader assembles a block from its sources in the order k = 0..N-1: at each step the
// readers pull from distinct sources (no source serves two readers at once), and each reader
// visits every source once, itself last.
TEST(Dwdp, CopyOrderNeverSendsTwoReadersToOneSource) {
  for (int size : {2, 3, 4, 8}) {
    const DwdpLayout l(size, 3, size_t(64) << 20, 256);
    for (int k = 0; k < size; ++k) {
      std::set<int> sources;
      for (int r = 0; r < size; ++r) sources.insert(l.source(r, k));
      EXPECT_EQ(int(sources.size()), size) << "size " << size << " step " << k;
    }
    for (int r = 0; r < size; ++r) {
      std::set<int> seen;
      for (int k = 0; k < size; ++k) seen.insert(l.source(r, k));
      EXPECT_EQ(int(seen.size()), size);
      EXPECT_EQ(l.source(r, size - 1), r) << "own slices last: the peers' transfers start first";
    }
  }
}

// Drives the slots over several passes of the block loop the way the model does (acquire, use,
// release every block, some run in place) and checks what the device side would do with the copies.
TEST(Dwdp, SlotsCopyEachBlockOncePerPassAheadOfUse) {
  for (int blocks : {1, 2, 3, 7, 40})
    for (int every : {0, 2, 3}) {  // blocks b % every == 0 run in place (0: none)
    SCOPED_TRACE(::testing::Message() << "blocks " << blocks << " in place every " << every);
    std::vector<char> in_place(size_t(blocks), 0);
    int staged = 0;
    for (int b = 0; b < blocks; ++b) {
      in_place[size_t(b)] = every > 0 && b % every == 0;
      staged += !in_place[size_t(b)];
    }
    DwdpSlots slots(blocks, in_place);
    int held[2] = {-1, -1};  // what each slot holds after the queued copies
    int reading = -1;        // slot of the staged block read last
    int copies = 0, copies_now = 0, prefetched_hits = 0;
    for (int pass = 0; pass < 3; ++pass)
      for (int b = 0; b < blocks; ++b) {
        DwdpSlots::Copy now, next;
        const int s = slots.acquire(b, &now, &next);
        if (in_place[size_t(b)]) {
          EXPECT_EQ(s, -1) << "a block run in place takes no slot";
          EXPECT_LT(now.block, 0);
        } else {
          ASSERT_TRUE(s == 0 || s == 1);
          if (now.block >= 0) {
            EXPECT_EQ(now.block, b);
            EXPECT_EQ(now.slot, s);
            held[s] = b;
            ++copies;
            ++copies_now;
          } else {
            EXPECT_EQ(held[s], b) << "no copy issued, so the slot must already hold the block";
            ++prefetched_hits;
          }
          reading = s;
        }
        if (slots.next_staged(b) < 0) {
          EXPECT_LT(next.block, 0) << "no prefetch crosses the end of a pass";
        }
        if (next.block >= 0) {
          EXPECT_NE(next.slot, reading) << "a prefetch never overwrites the slot read last";
          EXPECT_FALSE(in_place[size_t(next.block)]);
          EXPECT_EQ(next.block, slots.next_staged(b));
          held[next.slot] = next.block;
          ++copies;
        }
      }
    // Up to two blocks stay staged; more are copied once per pass, all but the first of each
    // pass prefetched, and that one too when a block run in place comes before it.
    if (staged <= 2) {
      EXPECT_EQ(copies, staged);
    } else {
      EXPECT_EQ(copies, 3 * staged);
      EXPECT_EQ(copies_now, every > 0 ? 0 : 3);
      EXPECT_EQ(prefetched_hits, 3 * staged - copies_now);
    }
  }
  DwdpSlots slots(4, {0, 1, 0, 0});
  DwdpSlots::Copy now, next;
  EXPECT_THROW(slots.acquire(4, &now, &next), Error);
  EXPECT_EQ(slots.next_staged(0), 2);
  EXPECT_EQ(slots.next_staged(3), -1);
  const DwdpLayout two(2, 4, 1000, 256);
  EXPECT_EQ(DwdpSlots(two, 1).next_staged(0), 2) << "rank 1 of two runs blocks 1 and 3 in place";
}

// Beside a block run in place the next staged block is prefetched (once: a slot that holds it
// already is left alone), so the first staged block of a pass is not copied while the GPU waits.
TEST(Dwdp, SlotsPrefetchBesideBlocksRunInPlace) {
  DwdpSlots slots(6, {1, 0, 1, 0, 1, 1});
  DwdpSlots::Copy now, next;
  EXPECT_EQ(slots.acquire(0, &now, &next), -1);
  EXPECT_LT(now.block, 0);
  EXPECT_EQ(next.block, 1);
  const int s1 = next.slot;
  EXPECT_EQ(slots.acquire(1, &now, &next), s1);
  EXPECT_LT(now.block, 0) << "already prefetched";
  EXPECT_EQ(next.block, 3);
  EXPECT_NE(next.slot, s1);
  EXPECT_EQ(slots.acquire(2, &now, &next), -1);
  EXPECT_LT(next.block, 0) << "block 3 is already being staged";
  slots.acquire(3, &now, &next);
  EXPECT_LT(now.block, 0);
  EXPECT_LT(next.block, 0) << "no staged block after 3 in this pass";
  EXPECT_EQ(slots.acquire(4, &now, &next), -1);
  EXPECT_LT(next.block, 0) << "no prefetch crosses the end of a pass";
  slots.forget(s1);
  EXPECT_EQ(slots.acquire(0, &now, &next), -1);  // next pass: block 1's slot was forgotten
  EXPECT_EQ(next.block, 1) << "so it is copied again";
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
