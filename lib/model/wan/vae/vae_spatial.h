// Spatial context of a VAE decode: how this rank's activations relate to the whole frame.
// One rank holds the whole frame (LocalSpatialContext: no neighbours, zero padding everywhere);
// the parallel VAE (model/wan/vae/vae_parallel.h) splits the frame along height or width and
// exchanges halos with its neighbours. The decoder is the same code for both, on either device.
#pragma once
#include <functional>

#include "core/tensor.h"
#include "ops/vae_ops.h"

namespace vgen {

class VaeSpatialContext {
 public:
  virtual ~VaeSpatialContext() = default;
  // A conv input buffer from `alloc` (a fresh one with leading frames left to the caller for the
  // causal cache, or a conv's ring slot: ops/vae_ops.h) whose body is what `fill` writes into a
  // dense tensor of `shape` (this rank's part in the device's layout, in `dt` on `device`), extended
  // by `halo` rows/cols of the neighbouring ranks along the split dim. `pad` receives the zero
  // padding the conv still needs on each side.
  virtual Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                            const std::function<void(Tensor&)>& fill, Conv3dPad& pad) = 0;
  // The whole frame assembled from every rank's part of x (collective).
  virtual Tensor gather(const Tensor& x) = 0;
};

class LocalSpatialContext final : public VaeSpatialContext {
 public:
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override {
    (void)dt, (void)device;  // the buffer is alloc's
    VaeConvBuffer b = alloc(shape);
    fill(b.body);
    pad = {halo, halo, halo, halo};
    return b.buf;
  }
  Tensor gather(const Tensor& x) override { return x; }
};

}  // namespace vgen
