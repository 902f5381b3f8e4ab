// DWDP for the host DiT (WanTransformer::enable_host_dwdp): each block is laid out in staging slot
// 0, this rank's slices of it move into its MPI window, and its host tensors are dropped (a block
// this rank holds whole runs from the window); during each pass the others are assembled in the two
// staging slots.
#include "core/log.h"
#include "model/wan/dit/transformer.h"

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
  // The slices hold the fp32 tensors only: precision fp8 quantises a staged block at each use.
  for (WanBlockWeights& b : w_.blocks) for_each_fp8_linear(b, [](WanLinear& l) { l.w8 = l.w_scale = Tensor(); });
  for_each_fp8_linear(layout, [](WanLinear& l) { l.w8 = l.w_scale = Tensor(); });
  size_t span = 0;
  for_each_block_tensor(layout, [&](Tensor& t) {
    if (t.defined()) span += DwdpSpan::aligned(size_t(t.numel()) * sizeof(float), kSpanAlign);
  });
  auto dw = std::make_shared<DwdpHostWeights>(plan, DwdpLayout(plan.size, L, span, kSpanAlign), world.rank());
  const size_t staged = dw->layout().staged_bytes();
  // A block's tensors as fp32 views of the span at `base` (a slot, or the window for a block held whole).
  auto views_at = [&](void* base) {
    DwdpSpan views(base, staged, Device::kCPU, kSpanAlign, dw);
    WanBlockWeights v = layout;
    for_each_block_tensor(v, [&](Tensor& t) {
      if (t.defined()) t = views.next(t.shape(), DType::kF32);
    });
    return v;
  };
  for (int s = 0; s < 2; ++s) host_staged_[s] = views_at(dw->slot(s));
  for (int i = 0; i < L; ++i) {
    WanBlockWeights& b = w_.blocks[size_t(i)];
    DwdpSpan views(dw->slot(0), staged, Device::kCPU, kSpanAlign, dw);
    for_each_block_tensor(b, [&](Tensor& t) {
      if (t.defined()) views.next(t.shape(), DType::kF32).copy_from(t.dtype() == DType::kF32 ? t : t.to(DType::kF32));
    });
    dw->keep_own(i, dw->slot(0));
    void* whole = dw->in_place(i);  // a block held whole runs from the window
    b = whole ? views_at(whole) : WanBlockWeights{};  // its host tensors (mapping or copy) are released
  }
  dw->publish();
  host_dwdp_ = std::move(dw);
  log_info("DWDP (host): {:.1f} MiB of DiT block slices in this rank's window ({} KiB slices over a group of {}) + "
           "2 staging slots of {:.1f} MiB",
           double(host_dwdp_->arena_bytes()) / 1048576.0, host_dwdp_->layout().slice_bytes() / 1024, plan.size,
           double(staged) / 1048576.0);
}

const WanBlockWeights& WanTransformer::block_begin(size_t i) const {
  if (!host_dwdp_) return w_.blocks[i];
  const int s = host_dwdp_->acquire(int(i));
  return s < 0 ? w_.blocks[i] : host_staged_[s];
}

void WanTransformer::block_end(size_t i) const {
  if (host_dwdp_) host_dwdp_->release(int(i));
}

}  // namespace vgen
