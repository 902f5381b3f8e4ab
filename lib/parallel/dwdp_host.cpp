// DWDP on the host (contract in dwdp.h): MPI one-sided over MPI_COMM_WORLD. The window is the
// rank's arena of slices; every rank holds MPI_Win_lock_all for the window's lifetime, so fetches
// need no action from the owner (passive target). A source's slices of a block are contiguous in
// its window and every N-th slice in the slot: one MPI_Get per source, the origin side a strided
// datatype of whole slices.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "core/error.h"
#include "core/log.h"
#include "core/wait_marker.h"
#include "parallel/dwdp.h"

namespace vgen {
namespace {

void check_mpi(int rc, const char* what) {
  VGEN_CHECK(rc == MPI_SUCCESS, ExitCode::kDistributed, "DWDP (host): {} failed (MPI error {})", what, rc);
}

// MPI counts are int: a slice (at most a block) must fit one.
int as_count(size_t n, const char* what) {
  VGEN_CHECK(n <= size_t(2147483647), ExitCode::kInternal, "DWDP (host): {} of {} exceeds an MPI count", what, n);
  return int(n);
}

// n slices of `width` bytes, `spitch` apart at src and `dpitch` apart at dst.
void copy_slices(char* dst, size_t dpitch, const char* src, size_t spitch, size_t width, int n) {
  for (int i = 0; i < n; ++i) std::memcpy(dst + size_t(i) * dpitch, src + size_t(i) * spitch, width);
}

}  // namespace

DwdpHostWeights::DwdpHostWeights(const DwdpPlan& plan, const DwdpLayout& layout, int world_rank)
    : plan_(plan), layout_(layout), slots_(layout, plan.rank) {
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  VGEN_CHECK(world_rank_ == world_rank, ExitCode::kInternal,
             "DWDP (host): the group was planned for world rank {} but this is MPI_COMM_WORLD rank {}", world_rank,
             world_rank_);
  VGEN_CHECK(layout_.group_size() == plan_.size, ExitCode::kInternal, "DWDP (host): a layout of {} ranks for a group "
             "of {}", layout_.group_size(), plan_.size);
  const size_t slot_bytes = (2 * layout_.staged_bytes() + 63) / 64 * 64;
  slot_mem_ = {static_cast<char*>(std::aligned_alloc(64, slot_bytes)), std::free};
  VGEN_CHECK(slot_mem_ != nullptr, ExitCode::kInternal, "DWDP (host): cannot allocate 2 staging slots of {} bytes",
             layout_.staged_bytes());
  const MPI_Aint bytes = MPI_Aint(layout_.arena_bytes(plan_.rank));
  auto* win = new MPI_Win;
  WaitScope wait(WaitOp::kWindow, WaitBackend::kMpi, "dwdp");
  check_mpi(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &arena_, win), "MPI_Win_allocate");
  win_ = win;
  check_mpi(MPI_Win_lock_all(0, *win), "MPI_Win_lock_all");
}

DwdpHostWeights::~DwdpHostWeights() {
  if (!win_) return;
  auto* win = static_cast<MPI_Win*>(win_);
  if (pending_[0] || pending_[1]) MPI_Win_flush_all(*win);  // not complete(): no throwing here
  if (std::uncaught_exceptions() > 0) return;  // collective teardown only on the normal path
  MPI_Win_unlock_all(*win);
  MPI_Win_free(win);  // collective: no rank frees its arena while a peer can still read it
  delete win;
}

void* DwdpHostWeights::slot(int s) { return slot_mem_.get() + size_t(s) * layout_.staged_bytes(); }

void* DwdpHostWeights::in_place(int block) {
  return layout_.in_place(block, plan_.rank) ? static_cast<char*>(arena_) + layout_.arena_offset(block, plan_.rank)
                                             : nullptr;
}

void DwdpHostWeights::keep_own(int block, const void* image) {
  const size_t sl = layout_.slice_bytes();
  copy_slices(static_cast<char*>(arena_) + layout_.arena_offset(block, plan_.rank), sl,
              static_cast<const char*>(image) + size_t(layout_.first_slice(block, plan_.rank)) * sl,
              size_t(plan_.size) * sl, sl, layout_.count(block, plan_.rank));
}

void DwdpHostWeights::publish() {
  auto* win = static_cast<MPI_Win*>(win_);
  check_mpi(MPI_Win_sync(*win), "MPI_Win_sync");  // this rank's stores are visible in its window
  WaitScope wait(WaitOp::kBarrier, WaitBackend::kMpi, "world");
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void DwdpHostWeights::complete(int slot) {
  if (!pending_[slot]) return;
  WaitScope wait(WaitOp::kRemoteGet, WaitBackend::kMpi, "dwdp");
  check_mpi(MPI_Win_flush_all(*static_cast<MPI_Win*>(win_)), "MPI_Win_flush_all");
  pending_[0] = pending_[1] = false;  // a flush completes every outstanding get
}

void DwdpHostWeights::fetch(const DwdpSlots::Copy& c) {
  if (c.block < 0) return;
  auto* win = static_cast<MPI_Win*>(win_);
  const size_t sl = layout_.slice_bytes();
  char* dst = static_cast<char*>(slot(c.slot));
  complete(c.slot);  // an unconsumed prefetch (a pass cut short) ends before the slot is refilled
  // Datatypes freed on every path (MPI keeps them until the gets complete).
  struct Types {
    MPI_Datatype slice = MPI_DATATYPE_NULL, strided = MPI_DATATYPE_NULL;
    ~Types() {
      if (strided != MPI_DATATYPE_NULL) MPI_Type_free(&strided);
      if (slice != MPI_DATATYPE_NULL) MPI_Type_free(&slice);
    }
  } t;
  pending_[c.slot] = true;  // from the first get on: a flush must precede any reuse or teardown
  try {
    check_mpi(MPI_Type_contiguous(as_count(sl, "a slice"), MPI_BYTE, &t.slice), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&t.slice), "MPI_Type_commit");
    for (int k = 0; k < plan_.size; ++k) {
      const int src = layout_.source(plan_.rank, k);
      const int n = layout_.count(c.block, src);
      if (n == 0) continue;
      char* first = dst + size_t(layout_.first_slice(c.block, src)) * sl;
      if (src == plan_.rank) {  // own slices: from this rank's window memory
        copy_slices(first, size_t(plan_.size) * sl,
                    static_cast<const char*>(arena_) + layout_.arena_offset(c.block, src), sl, sl, n);
        continue;
      }
      check_mpi(MPI_Type_vector(n, 1, plan_.size, t.slice, &t.strided), "MPI_Type_vector");
      check_mpi(MPI_Type_commit(&t.strided), "MPI_Type_commit");
      const int target = world_rank_ - plan_.rank + src;
      check_mpi(MPI_Get(first, 1, t.strided, target, MPI_Aint(layout_.arena_offset(c.block, src)), n, t.slice, *win),
                "MPI_Get");
      MPI_Type_free(&t.strided);
    }
  } catch (...) {
    slots_.forget(c.slot);  // the slot holds nothing usable; pending_ still flushes the issued gets
    throw;
  }
}

int DwdpHostWeights::acquire(int block) {
  VGEN_ASSERT(acquired_ < 0, "dwdp: block {} acquired before block {} was released", block, acquired_);
  DwdpSlots::Copy now, next;
  const int s = slots_.acquire(block, &now, &next);
  fetch(now);
  if (s >= 0) complete(s);  // the slot's gets end before it is read
  fetch(next);
  acquired_ = block;
  return s;
}

void DwdpHostWeights::release(int block) {
  VGEN_ASSERT(acquired_ == block, "dwdp: release of block {} while block {} is acquired", block, acquired_);
  acquired_ = -1;
}

}  // namespace vgen
