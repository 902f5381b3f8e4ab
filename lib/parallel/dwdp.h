// DWDP, distributed weight data parallelism (DESIGN.md "The denoising step, sharded"): the ranks of
// a dwdp group — parallel_config.dwdp_size consecutive world ranks on one node — keep one copy of
// the DiT's blocks between them. Block b lives on group rank b % N; before a rank runs a block it
// does not own, the block's bytes are pulled from the owner's GPU over the copy engine (CUDA IPC:
// no SMs, no rendezvous, the owner's weights never change) into one of two staging slots, and the
// next one is pulled while the current block computes. Each GPU then holds 1/N of the block
// weights plus two blocks. On the CPU the same protocol runs over an MPI window (DwdpHostWeights).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dist/communicator.h"

namespace vgen {

// Successive tensor views over a block's span of memory (an owned block in an arena, or a staging
// slot), each `align`-byte aligned, in the order they are taken; `keep` stays alive while a view
// does (the arena owns the memory: the views never free it).
class DwdpSpan {
 public:
  DwdpSpan(void* base, size_t bytes, Device device, size_t align, std::shared_ptr<void> keep);
  Tensor next(const Shape& shape, DType dtype);
  static size_t aligned(size_t n, size_t align) { return (n + align - 1) / align * align; }

 private:
  std::shared_ptr<Storage> st_;
  size_t off_ = 0, align_;
};

// Which blocks this rank owns.
struct DwdpPlan {
  int size = 1;  // dwdp_size
  int rank = 0;  // this rank's position in its group
  // The group of world rank `world_rank` (consecutive ranks [g·size, (g+1)·size)); kRecipe when
  // size does not divide the world.
  static DwdpPlan of(int world_rank, int world_size, int dwdp_size);
  bool active() const { return size > 1; }
  int owner(int block) const { return block % size; }
  bool owns(int block) const { return owner(block) == rank; }
  // Position of an owned block in its owner's arena, and how many of `blocks` this rank owns.
  int arena_index(int block) const { return block / size; }
  int owned_count(int blocks) const { return blocks > rank ? (blocks - rank + size - 1) / size : 0; }
};

// Staging of the blocks a rank does not own (host-side bookkeeping, testable without a GPU): two
// slots; acquire(b) names the slot block b is (or is to be) copied into and whether a copy must
// be issued; the next block not owned is staged into the other slot while b computes.
class DwdpSlots {
 public:
  DwdpSlots(const DwdpPlan& plan, int num_blocks) : plan_(plan), blocks_(num_blocks) {}
  struct Copy {
    int block = -1, slot = -1;  // block -1: nothing to copy
  };
  // For a rank about to run block b (not owned): the slot holding b, the copy of b if it is not
  // staged yet (issued before the slot is read), and the prefetch of the next block not owned in
  // this pass over the blocks (into the other slot, after that slot's last reader released it).
  // No prefetch crosses the end of a pass, so no copy from a peer is in flight once a pass has
  // computed: ranks that pass a collective after their last forward may free their arenas.
  int acquire(int b, Copy* now, Copy* next);
  int next_foreign(int b) const;  // the next block after b this rank does not own; -1: none

 private:
  DwdpPlan plan_;
  int blocks_;
  int held_[2] = {-1, -1};  // block staged (or being staged) in each slot
  int last_ = -1;           // slot of the block acquired last
};

// Neither side is thread-safe: one pass over the blocks at a time per model (acquire b, queue the
// reads of b, release b, then the next block), as the DiT runs them.

// The device side (lib/parallel/dwdp_cuda.cpp): this rank's arena of owned blocks, the two slots,
// the peers' arenas mapped over CUDA IPC, and the copy-stream events that order it all.
class DwdpDeviceWeights {
 public:
  virtual ~DwdpDeviceWeights() = default;
  // Device address of owned block b (block_bytes, 256-byte aligned) and of staging slot s.
  virtual void* owned(int block) = 0;
  virtual void* slot(int s) = 0;
  virtual size_t block_bytes() const = 0;
  virtual size_t device_bytes() const = 0;  // arena + slots
  // Collective over `world` (every world rank, the same point): exchanges the IPC handles of the
  // arenas (and the host names: a group must share a node, else kRecipe) and maps the peers'.
  virtual void publish(Communicator& world) = 0;
  // Stream-ordered on compute_stream(): the slot block b was copied into, the compute stream
  // waiting for that copy (-1 when b is owned: read owned(b)); the next foreign block is staged.
  virtual int acquire(int block) = 0;
  // The compute stream's reads of block b are queued: its slot may be overwritten after them.
  virtual void release(int block) = 0;
};

// The host side (dwdp_host.cpp): the arena is an MPI window over MPI_COMM_WORLD (passive target,
// a shared lock on every rank for the window's lifetime); a foreign block is fetched with MPI_Get,
// the next one with MPI_Rget into the other slot while the current block computes.
class DwdpHostWeights {
 public:
  // Collective over MPI_COMM_WORLD (every rank, the same point); world_rank is this rank there
  // (checked). Fetches need no MPI call by the owner on one node (shared-memory window); across
  // nodes without RDMA they progress when the owner enters MPI, so keep a group on one node.
  DwdpHostWeights(const DwdpPlan& plan, int num_blocks, size_t block_bytes, int world_rank);
  // Collective too (MPI_Win_free), unless an exception is unwinding (then the window is left to
  // the ending job).
  ~DwdpHostWeights();
  DwdpHostWeights(const DwdpHostWeights&) = delete;
  DwdpHostWeights& operator=(const DwdpHostWeights&) = delete;
  void* owned(int block);
  void* slot(int s);
  size_t block_bytes() const { return bb_; }
  // After the owned blocks are written: every rank's arena is complete past this (collective).
  void publish();
  // The slot holding block b, fetched and complete (-1 when b is owned); the next foreign block
  // is being fetched into the other slot. release(b) ends the reads of b's slot.
  int acquire(int block);
  void release(int block);

 private:
  void fetch(const DwdpSlots::Copy& c, bool wait);
  void complete(int slot);  // waits for a pending prefetch into `slot`, if any
  DwdpPlan plan_;
  DwdpSlots slots_;
  size_t bb_;
  int world_rank_ = 0;
  void* arena_ = nullptr;
  void* win_ = nullptr;       // MPI_Win*
  std::unique_ptr<char, void (*)(void*)> slot_mem_{nullptr, nullptr};  // 2 blocks, 64-byte aligned
  void* pending_[2] = {nullptr, nullptr};  // MPI_Request* of a slot's prefetch
  int acquired_ = -1;
};

// Allocates the arena (plan.owned_count(num_blocks) blocks) and the slots on the current device.
// kUsage in a CPU-only build.
std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan& plan, int num_blocks,
                                                            size_t block_bytes);

}  // namespace vgen
