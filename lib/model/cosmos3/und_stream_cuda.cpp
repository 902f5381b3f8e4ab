// The device half of und_stream.h: the slots' copies on copy_stream(), ordered against the compute.
#include <cuda_runtime.h>

#include "core/on_unwind.h"
#include "model/cosmos3/und_stream.h"

namespace vgen {

Cosmos3UndStream::Cosmos3UndStream() = default;

void Cosmos3UndStream::copy(const Cosmos3UndHost& host, size_t layer, size_t slot) const {
  const cudaStream_t cs = copy_stream();
  used_[slot].wait_on(cs);  // the compute of the layer before has read the slot
  VGEN_CUDA_CHECK(cudaMemcpyAsync(host.slot_blocks[slot]->ptr, host.layers[layer]->ptr, host.layer_bytes,
                                  cudaMemcpyHostToDevice, cs));
  copied_[slot].record(cs);
}

void Cosmos3UndStream::run(const Cosmos3UndHost& host,
                           const std::function<bool(size_t, const Cosmos3Tower&)>& fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = host.layers.size();
  if (n == 0) return;
  // Every queued copy is joined into the compute stream before the slots can be reused or freed in its
  // order: at the end, and when a layer throws (then the next copies also wait for what it queued).
  auto join = [this] {
    for (const CudaEvent& e : copied_) e.wait_on(compute_stream());
  };
  const OnUnwind on_error([this, &join] {
    for (CudaEvent& e : used_) e.record(compute_stream());
    join();
  });
  copy(host, 0, 0);
  for (size_t i = 0; i < n; ++i) {
    const size_t slot = i % 2;
    copied_[slot].wait_on(compute_stream());
    if (i + 1 < n) copy(host, i + 1, 1 - slot);  // overlaps the compute of layer i
    const bool more = fn(i, host.slots[slot]);
    used_[slot].record(compute_stream());
    if (!more) break;
  }
  join();
}

}  // namespace vgen
