// DWDP on the device (contract in dwdp.h): one cudaMalloc arena per rank for its owned blocks (an
// IPC handle covers a whole allocation), two staging slots, the peers' arenas opened with
// cudaIpcOpenMemHandle, block copies as cudaMemcpyAsync on copy_stream() (copy engine, no SMs).
// Ordering: a copy into a slot waits for the slot's last reader (freed event, compute stream);
// the compute stream waits for the copy (copied event) before it reads the slot.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "parallel/dwdp.h"

namespace vgen {
namespace {

// What each rank tells the others at publish().
struct HandleMsg {
  cudaIpcMemHandle_t handle;
  char host[64];
  int32_t has_arena;
  int32_t group_rank;
};

class CudaDwdp final : public DwdpDeviceWeights {
 public:
  CudaDwdp(const DwdpPlan& plan, int num_blocks, size_t block_bytes)
      : plan_(plan), slots_(plan, num_blocks), blocks_(num_blocks), bb_(block_bytes), peers_(size_t(plan.size)) {
    const size_t owned = size_t(plan.owned_count(num_blocks));
    if (owned > 0) VGEN_CUDA_CHECK(cudaMalloc(&arena_, owned * bb_));
    VGEN_CUDA_CHECK(cudaMalloc(&slot_mem_, 2 * bb_));
  }
  ~CudaDwdp() override {
    // Teardown: errors here cannot be reported usefully (process exit, a peer already gone). Our
    // copies end first; peers stopped reading our arena when they passed the collective after
    // their last forward (no prefetch outlives a pass, DwdpSlots::acquire).
    (void)cudaStreamSynchronize(copy_stream());
    for (void* p : peers_)
      if (p) (void)cudaIpcCloseMemHandle(p);
    if (arena_) (void)cudaFree(arena_);
    if (slot_mem_) (void)cudaFree(slot_mem_);
  }

  void* owned(int block) override {
    VGEN_ASSERT(plan_.owns(block) && arena_, "dwdp: block {} is not owned by group rank {}", block, plan_.rank);
    return static_cast<char*>(arena_) + size_t(plan_.arena_index(block)) * bb_;
  }
  void* slot(int s) override { return static_cast<char*>(slot_mem_) + size_t(s) * bb_; }
  size_t block_bytes() const override { return bb_; }
  size_t device_bytes() const override { return (size_t(plan_.owned_count(blocks_)) + 2) * bb_; }

  void publish(Communicator& world) override {
    HandleMsg mine{};
    if (arena_) {
      VGEN_CUDA_CHECK(cudaIpcGetMemHandle(&mine.handle, arena_));
      mine.has_arena = 1;
    }
    gethostname(mine.host, sizeof(mine.host) - 1);
    mine.group_rank = plan_.rank;
    Tensor send = Tensor::empty({int64_t(sizeof(HandleMsg))}, DType::kU8);
    std::memcpy(send.raw(), &mine, sizeof(mine));
    Tensor all = Tensor::empty({int64_t(sizeof(HandleMsg)) * world.size()}, DType::kU8);
    world.all_gather(send, all);
    const int first = world.rank() - plan_.rank;
    for (int g = 0; g < plan_.size; ++g) {
      HandleMsg peer;
      std::memcpy(&peer, static_cast<const char*>(all.raw()) + size_t(first + g) * sizeof(HandleMsg), sizeof(peer));
      VGEN_CHECK(std::strncmp(peer.host, mine.host, sizeof(mine.host)) == 0, ExitCode::kRecipe,
                 "parallel_config.dwdp_size {}: world ranks {} (host {}) and {} (host {}) share weights over CUDA "
                 "IPC and must run on one node",
                 plan_.size, world.rank(), mine.host, first + g, peer.host);
      if (g == plan_.rank || !peer.has_arena) continue;
      const cudaError_t e = cudaIpcOpenMemHandle(&peers_[size_t(g)], peer.handle, cudaIpcMemLazyEnablePeerAccess);
      VGEN_CHECK(e == cudaSuccess, ExitCode::kUsage,
                 "parallel_config.dwdp_size {}: cannot map the weights of world rank {} (cudaIpcOpenMemHandle: {}); "
                 "DWDP needs one GPU per rank with peer access",
                 plan_.size, first + g, cudaGetErrorString(e));
    }
    log_debug("dwdp: group rank {} of {}, {} owned blocks of {:.1f} MiB, 2 staging slots", plan_.rank, plan_.size,
              plan_.owned_count(blocks_), double(bb_) / 1048576.0);
  }

  int acquire(int block) override {
    if (plan_.owns(block)) return -1;
    VGEN_ASSERT(pending_ < 0, "dwdp: block {} acquired before block {} was released", block, pending_);
    DwdpSlots::Copy now, next;
    const int s = slots_.acquire(block, &now, &next);
    if (now.block >= 0) issue(now);
    copied_[s].wait_on(compute_stream());
    if (next.block >= 0) issue(next);
    pending_ = block;
    pending_slot_ = s;
    return s;
  }

  void release(int block) override {
    if (plan_.owns(block)) return;
    VGEN_ASSERT(pending_ == block, "dwdp: release of block {} while block {} is acquired", block, pending_);
    freed_[pending_slot_].record(compute_stream());
    pending_ = -1;
  }

 private:
  void issue(const DwdpSlots::Copy& c) {
    const char* src = static_cast<const char*>(peers_[size_t(plan_.owner(c.block))]);
    VGEN_CHECK(src != nullptr, ExitCode::kInternal, "dwdp: block {} has no mapped owner (publish not called?)",
               c.block);
    src += size_t(plan_.arena_index(c.block)) * bb_;
    freed_[c.slot].wait_on(copy_stream());
    VGEN_CUDA_CHECK(cudaMemcpyAsync(slot(c.slot), src, bb_, cudaMemcpyDeviceToDevice, copy_stream()));
    copied_[c.slot].record(copy_stream());
  }

  DwdpPlan plan_;
  DwdpSlots slots_;
  int blocks_;
  size_t bb_;
  void* arena_ = nullptr;
  void* slot_mem_ = nullptr;
  std::vector<void*> peers_;  // mapped arenas by group rank (null: self or no arena)
  CudaEvent copied_[2], freed_[2];
  int pending_ = -1, pending_slot_ = -1;
};

}  // namespace

std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan& plan, int num_blocks,
                                                            size_t block_bytes) {
  VGEN_CHECK(plan.active() && num_blocks > 0 && block_bytes > 0, ExitCode::kInternal,
             "dwdp: plan size {} with {} blocks of {} bytes", plan.size, num_blocks, block_bytes);
  return std::make_shared<CudaDwdp>(plan, num_blocks, block_bytes);
}

}  // namespace vgen
