// DWDP for the host DiT (WanTransformer::enable_host_dwdp): owned blocks move into this rank's MPI
// window, foreign blocks are dropped and read from the two staging slots during each pass.
#include "core/log.h"
#include "model/wan/transformer.h"

namespace vgen {
namespace {

size_t aligned64(size_t n) { return (n + 63) / 64 * 64; }

// Successive f32 views over `bytes` of host memory at `base` (the DWDP weights stay alive while a
// view does).
struct HostSpan {
  std::shared_ptr<Storage> st;
  size_t off = 0;
  HostSpan(void* base, size_t bytes, std::shared_ptr<DwdpHostWeights> keep) : st(std::make_shared<Storage>()) {
    st->ptr = base;
    st->bytes = bytes;
    st->device = Device::kCPU;
    st->keep_alive = std::move(keep);  // no release: the memory belongs to the DWDP weights
  }
  Tensor next(const Shape& shape) {
    Tensor t = Tensor::from_storage(st, off, shape, DType::kF32);
    off += aligned64(t.nbytes());
    return t;
  }
};

}  // namespace

void WanTransformer::enable_host_dwdp(int dwdp_size, const Communicator& world) {
  VGEN_CHECK(!device_ && !host_dwdp_ && !w_.blocks.empty() && w_.blocks[0].scale_shift_table.defined(),
             ExitCode::kInternal, "enable_host_dwdp: needs the host weights, once, before any device copy");
  const DwdpPlan plan = DwdpPlan::of(world.rank(), world.size(), dwdp_size);
  if (!plan.active()) return;
  const int L = int(w_.blocks.size());
  WanBlockWeights layout = w_.blocks[0];  // every block has these shapes
  size_t span = 0;
  for_each_block_tensor(layout, [&](Tensor& t) {
    if (t.defined()) span += aligned64(size_t(t.numel()) * sizeof(float));
  });
  auto dw = std::make_shared<DwdpHostWeights>(plan, L, span);
  for (int s = 0; s < 2; ++s) {
    HostSpan views(dw->slot(s), span, dw);
    host_staged_[s] = layout;
    for_each_block_tensor(host_staged_[s], [&](Tensor& t) {
      if (t.defined()) t = views.next(t.shape());
    });
  }
  for (int i = 0; i < L; ++i) {
    WanBlockWeights& b = w_.blocks[size_t(i)];
    if (!plan.owns(i)) {
      b = WanBlockWeights{};  // its host tensors (mapping or converted copy) are released
      continue;
    }
    HostSpan views(dw->owned(i), span, dw);
    for_each_block_tensor(b, [&](Tensor& t) {
      if (!t.defined()) return;
      Tensor v = views.next(t.shape());
      v.copy_from(t.dtype() == DType::kF32 ? t : t.to(DType::kF32));
      t = v;
    });
  }
  dw->publish();
  host_dwdp_ = std::move(dw);
  log_info("DWDP (host): {} of {} DiT blocks in this rank's window ({:.1f} MiB each) + 2 staging slots, group of {}",
           plan.owned_count(L), L, double(span) / 1048576.0, plan.size);
}

const WanBlockWeights& WanTransformer::host_block_begin(size_t i) const {
  if (!host_dwdp_) return w_.blocks[i];
  const int s = host_dwdp_->acquire(int(i));
  return s < 0 ? w_.blocks[i] : host_staged_[s];
}

void WanTransformer::host_block_end(size_t i) const {
  if (host_dwdp_) host_dwdp_->release(int(i));
}

}  // namespace vgen
