// DWDP on the device (contract in dwdp.h): one shareable arena per rank for its slices (one
// allocation: a handle covers all of it; dist/device_share.h, the transport agreed by the group at
// construction, parallel/dwdp_transport.h), two staging slots, the peers' arenas mapped here, a block
// assembled by one strided copy (cudaMemcpy2DAsync) per source on copy_stream() (copy engine, no
// SMs). Ordering: the copies into a slot wait for the slot's last reader (freed event, compute
// stream); the compute stream waits for them (copied event) before it reads the slot.
#include <cuda_runtime.h>

#include <cstdlib>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "dist/device_share.h"
#include "parallel/dwdp.h"
#include "parallel/dwdp_transport.h"

namespace vgen {
namespace {

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
  CudaDwdp(const DwdpPlan& plan, const DwdpLayout& layout, DwdpTransport want, Communicator& world)
      : plan_(plan), layout_(layout), slots_(layout, plan.rank), peers_(size_t(plan.size)) {
    kind_ = agree_dwdp_transport(world, plan_, want);
    arena_buf_ = std::make_unique<DeviceShareBuffer>(layout_.arena_bytes(plan_.rank), share_types_for(kind_));
    VGEN_CHECK(layout_.arena_bytes(plan_.rank) == 0 || (arena_buf_->types() & share_types_for(kind_)) != 0,
               ExitCode::kUsage, "DWDP: the arena of {:.1f} MiB could not be created with {} handles on this GPU",
               double(layout_.arena_bytes(plan_.rank)) / 1048576.0, share_kind_name(kind_));
    arena_ = arena_buf_->data();
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
    peers_.clear();
    arena_buf_.reset();
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
    exchange_dwdp_handles(world, plan_, *arena_buf_, kind_, &peers_);
    log_debug("dwdp: group rank {} of {} over {}, {:.1f} MiB of slices ({} KiB each), 2 staging slots of {:.1f} MiB",
              plan_.rank, plan_.size, share_kind_name(kind_), double(layout_.arena_bytes(plan_.rank)) / 1048576.0,
              layout_.slice_bytes() / 1024, double(layout_.staged_bytes()) / 1048576.0);
  }

  const char* transport() const override { return share_kind_name(kind_); }

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
      const DeviceSharePeer* peer = peers_[size_t(src_rank)].get();
      const char* src = static_cast<const char*>(src_rank == plan_.rank ? arena_ : peer ? peer->data() : nullptr);
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
  ShareKind kind_ = ShareKind::kIpc;
  std::unique_ptr<DeviceShareBuffer> arena_buf_;
  void* arena_ = nullptr;  // arena_buf_'s memory (null: no slices)
  void* slot_mem_ = nullptr;
  size_t max_pitch_ = 0;  // cudaDevAttrMaxPitch
  std::vector<std::unique_ptr<DeviceSharePeer>> peers_;  // mapped arenas by group rank (null: self or no slices)
  CudaEvent copied_[2], freed_[2];
  int pending_ = -1, pending_slot_ = -1;
};

}  // namespace

std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan& plan, const DwdpLayout& layout,
                                                            DwdpTransport transport, Communicator& world) {
  VGEN_CHECK(plan.active() && layout.group_size() == plan.size && layout.blocks() > 0, ExitCode::kInternal,
             "dwdp: plan size {} for a layout of {} ranks and {} blocks", plan.size, layout.group_size(),
             layout.blocks());
  const DwdpTransport want = dwdp_transport_choice(transport, std::getenv("VGEN_DWDP_TRANSPORT"));
  return std::make_shared<CudaDwdp>(plan, layout, want, world);
}

}  // namespace vgen
