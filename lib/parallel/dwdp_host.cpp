// DWDP on the host (contract in dwdp.h): MPI one-sided over MPI_COMM_WORLD. The window is the
// rank's arena of owned blocks; every rank holds MPI_Win_lock_all for the window's lifetime, so
// fetches need no action from the owner (passive target). Large blocks go in pieces of at most
// 1 GiB (MPI counts are int).
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "core/error.h"
#include "core/log.h"
#include "parallel/dwdp.h"

namespace vgen {
namespace {

constexpr size_t kPiece = size_t(1) << 30;

void check_mpi(int rc, const char* what) {
  VGEN_CHECK(rc == MPI_SUCCESS, ExitCode::kDistributed, "DWDP (host): {} failed (MPI error {})", what, rc);
}

}  // namespace

DwdpHostWeights::DwdpHostWeights(const DwdpPlan& plan, int num_blocks, size_t block_bytes, int world_rank)
    : plan_(plan), slots_(plan, num_blocks), bb_(block_bytes) {
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  VGEN_CHECK(world_rank_ == world_rank, ExitCode::kInternal,
             "DWDP (host): the group was planned for world rank {} but this is MPI_COMM_WORLD rank {}", world_rank,
             world_rank_);
  const size_t slot_bytes = (2 * bb_ + 63) / 64 * 64;
  slot_mem_ = {static_cast<char*>(std::aligned_alloc(64, slot_bytes)), std::free};
  VGEN_CHECK(slot_mem_ != nullptr, ExitCode::kInternal, "DWDP (host): cannot allocate 2 staging slots of {} bytes",
             bb_);
  const MPI_Aint bytes = MPI_Aint(size_t(plan.owned_count(num_blocks)) * bb_);
  auto* win = new MPI_Win;
  check_mpi(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &arena_, win), "MPI_Win_allocate");
  win_ = win;
  check_mpi(MPI_Win_lock_all(0, *win), "MPI_Win_lock_all");
}

DwdpHostWeights::~DwdpHostWeights() {
  if (!win_) return;
  auto* win = static_cast<MPI_Win*>(win_);
  for (void*& r : pending_)
    if (r) {  // not complete(): no throwing here
      MPI_Wait(static_cast<MPI_Request*>(r), MPI_STATUS_IGNORE);
      delete static_cast<MPI_Request*>(r);
      r = nullptr;
    }
  if (std::uncaught_exceptions() > 0) return;  // collective teardown only on the normal path
  MPI_Win_unlock_all(*win);
  MPI_Win_free(win);  // collective: no rank frees its arena while a peer can still read it
  delete win;
}

void* DwdpHostWeights::owned(int block) {
  VGEN_ASSERT(plan_.owns(block), "dwdp: block {} is not owned by group rank {}", block, plan_.rank);
  return static_cast<char*>(arena_) + size_t(plan_.arena_index(block)) * bb_;
}

void* DwdpHostWeights::slot(int s) { return slot_mem_.get() + size_t(s) * bb_; }

void DwdpHostWeights::publish() {
  auto* win = static_cast<MPI_Win*>(win_);
  check_mpi(MPI_Win_sync(*win), "MPI_Win_sync");  // this rank's stores are visible in its window
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void DwdpHostWeights::complete(int slot) {
  if (!pending_[slot]) return;
  auto* req = static_cast<MPI_Request*>(pending_[slot]);
  pending_[slot] = nullptr;
  const int rc = MPI_Wait(req, MPI_STATUS_IGNORE);
  delete req;
  check_mpi(rc, "MPI_Wait");
}

void DwdpHostWeights::fetch(const DwdpSlots::Copy& c, bool wait) {
  auto* win = static_cast<MPI_Win*>(win_);
  const int target = world_rank_ - plan_.rank + plan_.owner(c.block);
  const MPI_Aint disp = MPI_Aint(size_t(plan_.arena_index(c.block)) * bb_);
  char* dst = static_cast<char*>(slot(c.slot));
  complete(c.slot);  // an unconsumed prefetch (a pass cut short) ends before the slot is refilled
  if (wait) {
    for (size_t off = 0; off < bb_; off += kPiece) {
      const int n = int(std::min(kPiece, bb_ - off));
      check_mpi(MPI_Get(dst + off, n, MPI_BYTE, target, disp + MPI_Aint(off), n, MPI_BYTE, *win), "MPI_Get");
    }
    check_mpi(MPI_Win_flush(target, *win), "MPI_Win_flush");
    return;
  }
  // One request per fetch: pieces after the first are fetched blocking (a block over 1 GiB is
  // a 14B-scale block on the CPU, where this overlap matters least).
  for (size_t off = kPiece; off < bb_; off += kPiece) {
    const int n = int(std::min(kPiece, bb_ - off));
    check_mpi(MPI_Get(dst + off, n, MPI_BYTE, target, disp + MPI_Aint(off), n, MPI_BYTE, *win), "MPI_Get");
  }
  auto* req = new MPI_Request;
  const int n = int(std::min(kPiece, bb_));
  check_mpi(MPI_Rget(dst, n, MPI_BYTE, target, disp, n, MPI_BYTE, *win, req), "MPI_Rget");
  pending_[c.slot] = req;
  if (bb_ > kPiece) check_mpi(MPI_Win_flush(target, *win), "MPI_Win_flush");
}

int DwdpHostWeights::acquire(int block) {
  if (plan_.owns(block)) return -1;
  VGEN_ASSERT(acquired_ < 0, "dwdp: block {} acquired before block {} was released", block, acquired_);
  DwdpSlots::Copy now, next;
  const int s = slots_.acquire(block, &now, &next);
  complete(s);  // a prefetch into this slot ends before the slot is read or refilled
  if (now.block >= 0) fetch(now, true);
  if (next.block >= 0) fetch(next, false);
  acquired_ = block;
  return s;
}

void DwdpHostWeights::release(int block) {
  if (plan_.owns(block)) return;
  VGEN_ASSERT(acquired_ == block, "dwdp: release of block {} while block {} is acquired", block, acquired_);
  acquired_ = -1;
}

}  // namespace vgen
