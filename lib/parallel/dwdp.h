// DWDP, distributed weight data parallelism (docs/architecture.md "One denoising step"): the ranks of
// a dwdp group — parallel_config.dwdp_size consecutive world ranks of one NVLink domain (one node
// where the fabric reports none; dist/share_group.h) — keep one copy of
// the DiT's blocks between them. From three ranks on, each block's bytes are cut into slices of at
// most 2 MiB dealt round-robin over the group (DwdpLayout), so every rank holds ~1/N of every
// block; with two, each rank holds every other block whole. Before a block runs, a rank that does
// not hold it whole assembles it in one of two staging slots: its own slices from its arena, the
// others pulled from the peers' GPUs over the copy engine (no SMs, no rendezvous, the
// owners' weights never change), one strided copy per source, the sources in the order rank+1,
// rank+2, ... so at each step the readers of a group pull from distinct sources (no many-to-one
// contention on a source; the arenas shared through dist/device_share.h: CUDA VMM with POSIX file
// descriptors or fabric handles, or legacy CUDA IPC, parallel_config.dwdp_transport). The next
// block is assembled while the current one computes. Each GPU
// then holds 1/N of the block weights plus two blocks. On the CPU the same protocol runs over an
// MPI window (DwdpHostWeights).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "config/parallel_config.h"
#include "core/tensor.h"
#include "dist/communicator.h"

namespace vgen {

// Successive tensor views over a block's span of memory (a staging slot, or a block an arena holds
// whole), each `align`-byte aligned, in the order they are taken; `keep` stays alive while a view
// does (the DWDP weights own the memory: the views never free it).
class DwdpSpan {
 public:
  DwdpSpan(void* base, size_t bytes, Device device, size_t align, std::shared_ptr<void> keep);
  Tensor next(const Shape& shape, DType dtype);
  static size_t aligned(size_t n, size_t align) { return (n + align - 1) / align * align; }

 private:
  std::shared_ptr<Storage> st_;
  size_t off_ = 0, align_;
};

// This rank's place in its dwdp group.
struct DwdpPlan {
  int size = 1;  // dwdp_size
  int rank = 0;  // this rank's position in its group
  // The group of world rank `world_rank` (consecutive ranks [g·size, (g+1)·size)); kRecipe when
  // size does not divide the world.
  static DwdpPlan of(int world_rank, int world_size, int dwdp_size);
  bool active() const { return size > 1; }
};

constexpr size_t kDwdpMaxSlice = size_t(2) << 20;

// Where every byte of the blocks lives. A block's span is cut into `slices()` slices of
// slice_bytes() (the last one padded: a staging slot holds staged_bytes() >= the span); slice j of
// block b lives on group rank (b + j) % N, in that rank's arena after the slices it holds of the
// blocks before b, in slice order. So rank r holds slices first_slice(b, r), +N, +2N, ... of block
// b, contiguous in its arena and every N-th slice in the block: one strided copy per source.
// Slice size (slice_for): with two ranks a whole block (each block has one reader, so there is no
// contention to spread, and the owner runs its blocks in place: half the bytes a slice layout
// moves; 1% faster at 480p cfg 2, results/parallel/2xh200/2026-11-30_h200_issue7_runs27-32.json, 575833e against
// d798a28); from three ranks on min(2 MiB, ceil(span / N))
// rounded up to `align`, so no source has N-1 readers of one block at once. The environment
// variable VGEN_DWDP_SLICE_BYTES=n (a test knob) makes slices of min(n, span) for any group size.
class DwdpLayout {
 public:
  DwdpLayout(int group_size, int num_blocks, size_t block_bytes, size_t align);
  static size_t slice_for(int group_size, size_t block_bytes, size_t align);
  int group_size() const { return n_; }
  int blocks() const { return blocks_; }
  size_t slice_bytes() const { return slice_; }
  int slices() const { return slices_; }
  size_t staged_bytes() const { return size_t(slices_) * slice_; }
  int owner(int block, int slice) const { return (block + slice) % n_; }
  int first_slice(int block, int rank) const { return ((rank - block) % n_ + n_) % n_; }
  int count(int block, int rank) const;  // slices of `block` held by `rank`
  // Whether `rank` holds all of `block` (in the staged layout, at arena_offset): it runs it in place.
  bool in_place(int block, int rank) const { return count(block, rank) == slices_; }
  // Byte offset of rank's first slice of `block` in rank's arena, and the arena's size.
  size_t arena_offset(int block, int rank) const { return base_[size_t(rank)][size_t(block)]; }
  size_t arena_bytes(int rank) const { return base_[size_t(rank)][size_t(blocks_)]; }
  // The k-th source (k = 0..N-1) reader `rank` copies from when it assembles a block: the peers
  // rank+1, rank+2, ... (mod N) first, itself last. For each k the map reader -> source is a
  // permutation of the group.
  int source(int rank, int k) const { return (rank + 1 + k) % n_; }

 private:
  int n_, blocks_, slices_;
  size_t slice_;
  std::vector<std::vector<size_t>> base_;  // [rank][block]: arena offsets; [rank][blocks] = arena size
};

// The two staging slots (host-side bookkeeping, testable without a GPU): acquire(b) names the slot
// block b is (or is to be) assembled in and whether a copy must be issued; the next staged block
// is assembled into the other slot while b computes. Blocks run in place take no slot.
class DwdpSlots {
 public:
  // in_place[b] != 0: block b runs from this rank's arena (never acquired here).
  DwdpSlots(int num_blocks, std::vector<char> in_place = {});
  DwdpSlots(const DwdpLayout& layout, int rank);
  struct Copy {
    int block = -1, slot = -1;  // block -1: nothing to copy
  };
  // For a rank about to run block b: the slot holding b (-1 when b runs in place), the copy of b
  // if it is not staged yet (issued before the slot is read), and the prefetch of the next staged
  // block in this pass over the blocks, unless a slot already holds it (into the slot not read
  // last, after that slot's last reader released it). No prefetch crosses the end of a pass, so
  // no copy from a peer is in flight once a pass has computed: ranks that pass a collective after
  // their last forward may free their arenas.
  int acquire(int b, Copy* now, Copy* next);
  // A copy into `slot` failed: it holds nothing (the next acquire copies again).
  void forget(int slot) { held_[slot] = -1; }
  int next_staged(int b) const;  // the next block after b that is not run in place; -1: none

 private:
  Copy prefetch(int b, int slot);  // the next staged block after b into `slot`, unless held
  int blocks_;
  std::vector<char> in_place_;
  int held_[2] = {-1, -1};  // block staged (or being staged) in each slot
  int last_ = -1;           // slot of the block acquired last
};

// Neither side is thread-safe: one pass over the blocks at a time per model (acquire b, queue the
// reads of b, release b, then the next block), as the DiT runs them.

// The device side (lib/parallel/dwdp_cuda.cpp): this rank's arena of slices, the two slots, the
// peers' arenas mapped (VMM or CUDA IPC), and the copy-stream events that order it all.
class DwdpDeviceWeights {
 public:
  virtual ~DwdpDeviceWeights() = default;
  virtual const DwdpLayout& layout() const = 0;
  // Device address of staging slot s (layout().staged_bytes(), 256-byte aligned), and of a block
  // this rank runs in place (null for the others).
  virtual void* slot(int s) = 0;
  virtual void* in_place(int block) = 0;
  virtual size_t device_bytes() const = 0;  // arena + slots
  // Placement: keeps this rank's slices of `block` from `image` (the whole block in the staged
  // layout, on the device), stream-ordered on compute_stream().
  virtual void keep_own(int block, const void* image) = 0;
  // Collective over `world` (every world rank, the same point): exchanges the handles of the arenas
  // and maps the peers'.
  virtual void publish(Communicator& world) = 0;
  // How the peers' arenas are reached (share_kind_name: "ipc", "vmm-posix-fd", "vmm-fabric").
  virtual const char* transport() const = 0;
  // Stream-ordered on compute_stream(): the slot block b was assembled in, the compute stream
  // waiting for its copies (-1 when b runs in place); the next staged block is being assembled.
  virtual int acquire(int block) = 0;
  // The compute stream's reads of block b are queued: its slot may be overwritten after them.
  virtual void release(int block) = 0;
};

// The host side (dwdp_host.cpp): the arena is an MPI window over MPI_COMM_WORLD (passive target,
// a shared lock on every rank for the window's lifetime); a block's slices are fetched with one
// MPI_Get per source (a strided origin datatype), completed by MPI_Win_flush_all: at once for the
// block about to run, when it is needed for the block prefetched into the other slot.
class DwdpHostWeights {
 public:
  // Collective over MPI_COMM_WORLD (every rank, the same point); world_rank is this rank there
  // (checked). Fetches need no MPI call by the owner on one node (shared-memory window); across
  // nodes without RDMA they progress when the owner enters MPI, so keep a group on one node.
  DwdpHostWeights(const DwdpPlan& plan, const DwdpLayout& layout, int world_rank);
  // Collective too (MPI_Win_free), unless an exception is unwinding (then the window is left to
  // the ending job).
  ~DwdpHostWeights();
  DwdpHostWeights(const DwdpHostWeights&) = delete;
  DwdpHostWeights& operator=(const DwdpHostWeights&) = delete;
  const DwdpLayout& layout() const { return layout_; }
  void* slot(int s);
  void* in_place(int block);  // this rank's copy of a block it runs in place; null otherwise
  size_t arena_bytes() const { return layout_.arena_bytes(plan_.rank); }
  // Placement: keeps this rank's slices of `block` from `image` (the whole block, staged layout).
  void keep_own(int block, const void* image);
  // After the owned slices are written: every rank's arena is complete past this (collective).
  void publish();
  // The slot holding block b, fetched and complete (-1 when b runs in place); the next staged
  // block is being fetched into the other slot. release(b) ends the reads of b's slot.
  int acquire(int block);
  void release(int block);

 private:
  void fetch(const DwdpSlots::Copy& c);  // issues the gets (and copies the own slices)
  void complete(int slot);               // flushes the gets into `slot`, if any are pending
  DwdpPlan plan_;
  DwdpLayout layout_;
  DwdpSlots slots_;
  int world_rank_ = 0;
  void* arena_ = nullptr;
  void* win_ = nullptr;  // MPI_Win*
  std::unique_ptr<char, void (*)(void*)> slot_mem_{nullptr, nullptr};  // 2 slots, 64-byte aligned
  bool pending_[2] = {false, false};  // gets into a slot not yet flushed
  int acquired_ = -1;
};

// Allocates the arena (layout.arena_bytes(plan.rank)) and the slots on the current device, the
// arena shareable over the transport the group agrees on (collective over `world`, every rank at
// the same point: parallel/dwdp_transport.h agree_dwdp_transport; `transport` unless the
// environment variable VGEN_DWDP_TRANSPORT names one). kUsage in a CPU-only build.
std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan& plan, const DwdpLayout& layout,
                                                            DwdpTransport transport, Communicator& world);

}  // namespace vgen
