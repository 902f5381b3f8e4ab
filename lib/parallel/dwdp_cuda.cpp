// DWDP on the device (contract in dwdp.h): one cudaMalloc arena per rank for its slices (an IPC
// handle covers a whole allocation), two staging slots, the peers' arenas opened with
// cudaIpcOpenMemHandle, a block assembled by one strided copy (cudaMemcpy2DAsync) per source on
// copy_stream() (copy engine, no SMs). Ordering: the copies into a slot wait for the slot's last
// reader (freed event, compute stream); the compute stream waits for them (copied event) before it
// reads the slot.
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

// n slices of `width` bytes, `spitch` apart at src and `dpitch` apart at dst: one 2-D copy, or a
// plain copy for one slice (a whole block: its pitch could pass the device's maximum pitch), or one
// copy per slice when a pitch is over that maximum.
void copy_slices(char* dst, size_t dpitch, const char* src, size_t spitch, size_t width, int n, size_t max_pitch,
                 cudaStream_t stream) {
  if (n == 1) {
    VGEN_CUDA_CHECK(cudaMemcpyAsync(dst, src, width, cudaMemcpyDeviceToDevice, stream));
  } else if (dpitch <= max_pitch && spitch <= max_pitch) {
    VGEN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, size_t(n), cudaMemcpyDeviceToDevice, stream));
  } else {
    for (int i = 0; i < n; ++i)
      VGEN_CUDA_CHECK(cudaMemcpyAsync(dst + size_t(i) * dpitch, src + size_t(i) * spitch, width,
                                      cudaMemcpyDeviceToDevice, stream));
  }
}

class CudaDwdp final : public DwdpDeviceWeights {
 public:
  CudaDwdp(const DwdpPlan& plan, const DwdpLayout& layout)
      : plan_(plan), layout_(layout), slots_(layout, plan.rank), peers_(size_t(plan.size)) {
    const size_t arena = layout_.arena_bytes(plan_.rank);
    if (arena > 0) VGEN_CUDA_CHECK(cudaMalloc(&arena_, arena));
    int max_pitch = 0;
    VGEN_CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, cuda_current_device()));
    max_pitch_ = size_t(max_pitch);
    VGEN_CUDA_CHECK(cudaMalloc(&slot_mem_, 2 * layout_.staged_bytes()));
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

  const DwdpLayout& layout() const override { return layout_; }
  void* slot(int s) override { return static_cast<char*>(slot_mem_) + size_t(s) * layout_.staged_bytes(); }
  void* in_place(int block) override {
    return layout_.in_place(block, plan_.rank) ? static_cast<char*>(arena_) + layout_.arena_offset(block, plan_.rank)
                                               : nullptr;
  }
  size_t device_bytes() const override { return layout_.arena_bytes(plan_.rank) + 2 * layout_.staged_bytes(); }

  void keep_own(int block, const void* image) override {
    const int n = layout_.count(block, plan_.rank);
    if (n == 0) return;
    const size_t sl = layout_.slice_bytes();
    copy_slices(static_cast<char*>(arena_) + layout_.arena_offset(block, plan_.rank), sl,
                static_cast<const char*>(image) + size_t(layout_.first_slice(block, plan_.rank)) * sl,
                size_t(plan_.size) * sl, sl, n, max_pitch_, compute_stream());
  }

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
    log_debug("dwdp: group rank {} of {}, {:.1f} MiB of slices ({} KiB each), 2 staging slots of {:.1f} MiB",
              plan_.rank, plan_.size, double(layout_.arena_bytes(plan_.rank)) / 1048576.0,
              layout_.slice_bytes() / 1024, double(layout_.staged_bytes()) / 1048576.0);
  }

  int acquire(int block) override {
    VGEN_ASSERT(pending_ < 0, "dwdp: block {} acquired before block {} was released", block, pending_);
    DwdpSlots::Copy now, next;
    const int s = slots_.acquire(block, &now, &next);
    issue(now);
    if (s >= 0) copied_[s].wait_on(compute_stream());
    issue(next);
    pending_ = block;
    pending_slot_ = s;
    return s;
  }

  void release(int block) override {
    VGEN_ASSERT(pending_ == block, "dwdp: release of block {} while block {} is acquired", block, pending_);
    if (pending_slot_ >= 0) freed_[pending_slot_].record(compute_stream());
    pending_ = -1;
  }

 private:
  // The block's slices from every source, peers first (DwdpLayout::source), into the slot; nothing
  // for an empty copy. A failed copy leaves the slot holding nothing.
  void issue(const DwdpSlots::Copy& c) {
    if (c.block < 0) return;
    try {
      copy_block(c);
    } catch (...) {
      slots_.forget(c.slot);
      throw;
    }
  }

  void copy_block(const DwdpSlots::Copy& c) {
    freed_[c.slot].wait_on(copy_stream());
    const size_t sl = layout_.slice_bytes();
    char* dst = static_cast<char*>(slot(c.slot));
    for (int k = 0; k < plan_.size; ++k) {
      const int src_rank = layout_.source(plan_.rank, k);
      const int n = layout_.count(c.block, src_rank);
      if (n == 0) continue;
      const char* src = static_cast<const char*>(src_rank == plan_.rank ? arena_ : peers_[size_t(src_rank)]);
      VGEN_CHECK(src != nullptr, ExitCode::kInternal, "dwdp: group rank {} holds slices of block {} but is not mapped "
                 "(publish not called?)", src_rank, c.block);
      copy_slices(dst + size_t(layout_.first_slice(c.block, src_rank)) * sl, size_t(plan_.size) * sl,
                  src + layout_.arena_offset(c.block, src_rank), sl, sl, n, max_pitch_, copy_stream());
    }
    copied_[c.slot].record(copy_stream());
  }

  DwdpPlan plan_;
  DwdpLayout layout_;
  DwdpSlots slots_;
  void* arena_ = nullptr;
  void* slot_mem_ = nullptr;
  size_t max_pitch_ = 0;  // cudaDevAttrMaxPitch
  std::vector<void*> peers_;  // mapped arenas by group rank (null: self or no slices)
  CudaEvent copied_[2], freed_[2];
  int pending_ = -1, pending_slot_ = -1;
};

}  // namespace

std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan& plan, const DwdpLayout& layout) {
  VGEN_CHECK(plan.active() && layout.group_size() == plan.size && layout.blocks() > 0, ExitCode::kInternal,
             "dwdp: plan size {} for a layout of {} ranks and {} blocks", plan.size, layout.group_size(),
             layout.blocks());
  return std::make_shared<CudaDwdp>(plan, layout);
}

}  // namespace vgen
