#include "parallel/dwdp.h"

#include "core/error.h"

namespace vgen {

DwdpSpan::DwdpSpan(void* base, size_t bytes, Device device, size_t align, std::shared_ptr<void> keep)
    : st_(std::make_shared<Storage>()), align_(align) {
  st_->ptr = base;
  st_->bytes = bytes;
  st_->device = device;
  st_->keep_alive = std::move(keep);  // no release: the arena or slot belongs to the DWDP weights
}

Tensor DwdpSpan::next(const Shape& shape, DType dtype) {
  Tensor t = Tensor::from_storage(st_, off_, shape, dtype);
  off_ += aligned(t.nbytes(), align_);
  return t;
}

DwdpPlan DwdpPlan::of(int world_rank, int world_size, int dwdp_size) {
  VGEN_CHECK(dwdp_size >= 1 && world_size % dwdp_size == 0, ExitCode::kRecipe,
             "parallel_config.dwdp_size {}: must divide the world size {} (groups of consecutive ranks share one "
             "copy of the DiT blocks)",
             dwdp_size, world_size);
  DwdpPlan p;
  p.size = dwdp_size;
  p.rank = world_rank % dwdp_size;
  return p;
}

int DwdpSlots::next_foreign(int b) const {
  for (int n = b + 1; n < blocks_; ++n)
    if (!plan_.owns(n)) return n;
  return -1;
}

int DwdpSlots::acquire(int b, Copy* now, Copy* next) {
  VGEN_ASSERT(b >= 0 && b < blocks_ && !plan_.owns(b), "DwdpSlots::acquire: block {} of {} (owned: {})", b, blocks_,
              b >= 0 && b < blocks_ && plan_.owns(b));
  *now = Copy{};
  *next = Copy{};
  int s = held_[0] == b ? 0 : held_[1] == b ? 1 : -1;
  if (s < 0) {  // not staged: take the slot the last block did not use
    s = last_ < 0 ? 0 : 1 - last_;
    *now = Copy{b, s};
    held_[s] = b;
  }
  const int n = next_foreign(b);
  if (n >= 0 && held_[1 - s] != n) {
    *next = Copy{n, 1 - s};
    held_[1 - s] = n;
  }
  last_ = s;
  return s;
}

#ifndef VGEN_WITH_CUDA
std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan&, int, size_t) {
  VGEN_THROW(ExitCode::kUsage, "parallel_config.dwdp_size > 1 streams DiT weights between GPUs; this vgen was built "
                               "without the CUDA backend");
}
#endif

}  // namespace vgen
