// DWDP for the host DiT (WanTransformer::enable_host_dwdp): owned blocks move into this rank's MPI
// window, foreign blocks are dropped and read from the two staging slots during each pass.
#include "core/log.h"
#include "model/wan/transformer.h"

namespace vgen {
namespace {
constexpr size_t kSpanAlign = 64;
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
    if (t.defined()) span += DwdpSpan::aligned(size_t(t.numel()) * sizeof(float), kSpanAlign);
  });
  auto dw = std::make_shared<DwdpHostWeights>(plan, L, span, world.rank());
  for (int s = 0; s < 2; ++s) {
    DwdpSpan views(dw->slot(s), span, Device::kCPU, kSpanAlign, dw);
    host_staged_[s] = layout;
    for_each_block_tensor(host_staged_[s], [&](Tensor& t) {
      if (t.defined()) t = views.next(t.shape(), DType::kF32);
    });
  }
  for (int i = 0; i < L; ++i) {
    WanBlockWeights& b = w_.blocks[size_t(i)];
    if (!plan.owns(i)) {
      b = WanBlockWeights{};  // its host tensors (mapping or converted copy) are released
      continue;
    }
    DwdpSpan views(dw->owned(i), span, Device::kCPU, kSpanAlign, dw);
    for_each_block_tensor(b, [&](Tensor& t) {
      if (!t.defined()) return;
      Tensor v = views.next(t.shape(), DType::kF32);
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
