// DWDP for the host Cosmos 3 transformer (Cosmos3Transformer::enable_host_dwdp): the generation
// tower's layers are the blocks. Each is laid out in staging slot 0, this rank's slices of it move
// into its MPI window and its host tensors are dropped (a layer this rank holds whole runs from the
// window); during each pass the others are assembled in the two staging slots. block_begin/end
// serve the device's DWDP too (placed at load: weights.h Cosmos3GenDwdp).
#include "core/log.h"
#include "model/cosmos3/transformer.h"

namespace vgen {
namespace {

constexpr size_t kSpanAlign = 64;

// A generation tower's tensors in a fixed order (undefined ones included: the caller skips them).
template <typename F> void for_each_tower_tensor(Cosmos3Tower& t, F&& f) {
  for (Tensor* x : {&t.in_norm, &t.post_norm, &t.q_norm, &t.k_norm, &t.k_norm_for_gen}) f(*x);
  for (LinearWeights* l : {&t.q, &t.k, &t.v, &t.o, &t.gate, &t.up, &t.down}) {
    f(l->w);
    f(l->b);
  }
}

}  // namespace

void Cosmos3Transformer::enable_host_dwdp(int dwdp_size, const Communicator& world) {
  VGEN_CHECK(device_ == Device::kCPU && !host_dwdp_ && !w_.layers.empty() && w_.layers[0].gen.up.w.defined(),
             ExitCode::kInternal, "enable_host_dwdp: needs the host weights, once");
  const DwdpPlan plan = DwdpPlan::of(world.rank(), world.size(), dwdp_size);
  if (!plan.active()) return;
  const int L = int(w_.layers.size());
  // The slices hold the fp32 tensors only: precision fp8 quantises a staged layer at each use.
  for (Cosmos3Layer& l : w_.layers)
    for (LinearWeights* lw : {&l.gen.q, &l.gen.k, &l.gen.v, &l.gen.o, &l.gen.gate, &l.gen.up, &l.gen.down})
      lw->w8 = lw->w_scale = Tensor();
  Cosmos3Tower layout = w_.layers[0].gen;  // every layer has these shapes
  size_t span = 0;
  for_each_tower_tensor(layout, [&](Tensor& t) {
    if (t.defined()) span += DwdpSpan::aligned(size_t(t.numel()) * sizeof(float), kSpanAlign);
  });
  auto dw = std::make_shared<DwdpHostWeights>(plan, DwdpLayout(plan.size, L, span, kSpanAlign), world.rank());
  const size_t staged = dw->layout().staged_bytes();
  // A layer's tensors as fp32 views of the span at `base` (a slot, or the window for a layer held whole).
  auto views_at = [&](void* base) {
    DwdpSpan views(base, staged, Device::kCPU, kSpanAlign, dw);
    Cosmos3Tower v = layout;
    for_each_tower_tensor(v, [&](Tensor& t) {
      if (t.defined()) t = views.next(t.shape(), DType::kF32);
    });
    return v;
  };
  for (int s = 0; s < 2; ++s) host_staged_[size_t(s)] = views_at(dw->slot(s));
  for (int i = 0; i < L; ++i) {
    Cosmos3Tower& g = w_.layers[size_t(i)].gen;
    DwdpSpan views(dw->slot(0), staged, Device::kCPU, kSpanAlign, dw);
    for_each_tower_tensor(g, [&](Tensor& t) {
      if (t.defined()) views.next(t.shape(), DType::kF32).copy_from(t.dtype() == DType::kF32 ? t : t.to(DType::kF32));
    });
    dw->keep_own(i, dw->slot(0));
    void* whole = dw->in_place(i);  // a layer held whole runs from the window
    g = whole ? views_at(whole) : Cosmos3Tower{};  // its host tensors are released
  }
  dw->publish();
  host_dwdp_ = std::move(dw);
  log_info("DWDP (host): {:.1f} MiB of generation-layer slices in this rank's window ({} KiB slices over a group of "
           "{}) + 2 staging slots of {:.1f} MiB",
           double(host_dwdp_->arena_bytes()) / 1048576.0, host_dwdp_->layout().slice_bytes() / 1024, plan.size,
           double(staged) / 1048576.0);
}

const Cosmos3Tower& Cosmos3Transformer::block_begin(size_t i) const {
  if (w_.gen_dwdp) {  // the device's (weights.h Cosmos3GenDwdp)
    const int s = w_.gen_dwdp->weights->acquire(int(i));
    return s < 0 ? w_.layers[i].gen : w_.gen_dwdp->staged[size_t(s)];
  }
  if (!host_dwdp_) return w_.layers[i].gen;
  const int s = host_dwdp_->acquire(int(i));
  return s < 0 ? w_.layers[i].gen : host_staged_[size_t(s)];
}

void Cosmos3Transformer::block_end(size_t i) const {
  if (w_.gen_dwdp) w_.gen_dwdp->weights->release(int(i));
  if (host_dwdp_) host_dwdp_->release(int(i));
}

}  // namespace vgen
