#include "parallel/dwdp.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "parallel/dwdp_transport.h"

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

DwdpLayout::DwdpLayout(int group_size, int num_blocks, size_t block_bytes, size_t align)
    : n_(group_size), blocks_(num_blocks) {
  VGEN_CHECK(group_size >= 1 && num_blocks >= 0 && block_bytes > 0 && align > 0, ExitCode::kInternal,
             "dwdp layout: group {} blocks {} block bytes {} align {}", group_size, num_blocks, block_bytes, align);
  slice_ = slice_for(group_size, block_bytes, align);
  slices_ = int((block_bytes + slice_ - 1) / slice_);
  base_.assign(size_t(n_), std::vector<size_t>(size_t(blocks_) + 1, 0));
  for (int r = 0; r < n_; ++r)
    for (int b = 0; b < blocks_; ++b)
      base_[size_t(r)][size_t(b) + 1] = base_[size_t(r)][size_t(b)] + size_t(count(b, r)) * slice_;
}

size_t DwdpLayout::slice_for(int group_size, size_t block_bytes, size_t align) {
  static const size_t forced = [] {
    const char* e = std::getenv("VGEN_DWDP_SLICE_BYTES");
    return e ? size_t(std::strtoull(e, nullptr, 10)) : size_t(0);
  }();
  if (forced > 0) return DwdpSpan::aligned(std::min(forced, block_bytes), align);
  if (group_size <= 2) return DwdpSpan::aligned(block_bytes, align);
  const size_t share = (block_bytes + size_t(group_size) - 1) / size_t(group_size);
  return DwdpSpan::aligned(std::min(kDwdpMaxSlice, share), align);
}

int DwdpLayout::count(int block, int rank) const {
  const int j0 = first_slice(block, rank);
  return j0 < slices_ ? (slices_ - 1 - j0) / n_ + 1 : 0;
}

DwdpSlots::DwdpSlots(int num_blocks, std::vector<char> in_place) : blocks_(num_blocks), in_place_(std::move(in_place)) {
  in_place_.resize(size_t(std::max(num_blocks, 0)), 0);
}

DwdpSlots::DwdpSlots(const DwdpLayout& layout, int rank) : DwdpSlots(layout.blocks()) {
  for (int b = 0; b < blocks_; ++b) in_place_[size_t(b)] = layout.in_place(b, rank);
}

int DwdpSlots::next_staged(int b) const {
  for (int n = b + 1; n < blocks_; ++n)
    if (!in_place_[size_t(n)]) return n;
  return -1;
}

DwdpSlots::Copy DwdpSlots::prefetch(int b, int slot) {
  const int n = next_staged(b);
  if (n < 0 || held_[0] == n || held_[1] == n) return Copy{};
  held_[slot] = n;
  return Copy{n, slot};
}

int DwdpSlots::acquire(int b, Copy* now, Copy* next) {
  VGEN_ASSERT(b >= 0 && b < blocks_, "DwdpSlots::acquire: block {} of {}", b, blocks_);
  *now = Copy{};
  const int other = last_ < 0 ? 0 : 1 - last_;  // the slot the last staged block did not use
  if (in_place_[size_t(b)]) {
    *next = prefetch(b, other);
    return -1;
  }
  int s = held_[0] == b ? 0 : held_[1] == b ? 1 : -1;
  if (s < 0) {  // not staged: take the slot the last block did not use
    s = other;
    *now = Copy{b, s};
    held_[s] = b;
  }
  *next = prefetch(b, 1 - s);
  last_ = s;
  return s;
}

DwdpTransport dwdp_transport_choice(DwdpTransport recipe, const char* env) {
  if (env == nullptr || *env == '\0') return recipe;
  for (const Named<DwdpTransport>& t : kDwdpTransportNames)
    if (std::string(env) == t.name) return t.value;
  VGEN_THROW(ExitCode::kUsage, "VGEN_DWDP_TRANSPORT={}: expected auto, vmm or ipc", env);
}

#ifndef VGEN_WITH_CUDA
std::shared_ptr<DwdpDeviceWeights> make_dwdp_device_weights(const DwdpPlan&, const DwdpLayout&, DwdpTransport,
                                                            Communicator&) {
  VGEN_THROW(ExitCode::kUsage, "parallel_config.dwdp_size > 1 streams DiT weights between GPUs; this vgen was built "
                               "without the CUDA backend");
}
#endif

}  // namespace vgen
