// Spatial context of a VAE decode: how this rank's activations relate to the whole frame.
// One rank holds the whole frame (LocalSpatialContext: no neighbours, zero padding everywhere);
// the parallel VAE (model/wan/vae/vae_parallel.h) splits the frame along height or width and
// exchanges halos with its neighbours. The decoder is the same code for both.
#pragma once
#include "core/tensor.h"
#include "ops/vae_ops.h"

namespace vgen {

class VaeSpatialContext {
 public:
  virtual ~VaeSpatialContext() = default;
  // x [C, T, H, W] (this rank's part). Returns x with `halo` rows/cols of the neighbouring ranks
  // attached along the split dim, and sets `pad` to the zero padding that a stride-1 conv with
  // (k−1)/2 = halo still needs on each side (global frame edges and the unsplit dim).
  virtual Tensor extend(const Tensor& x, int64_t halo, Conv3dPad& pad) = 0;
  // The whole frame [C, T, H_full, W_full] assembled from every rank's part (collective).
  virtual Tensor gather(const Tensor& x) = 0;
};

class LocalSpatialContext final : public VaeSpatialContext {
 public:
  Tensor extend(const Tensor& x, int64_t halo, Conv3dPad& pad) override {
    pad = {halo, halo, halo, halo};
    return x;
  }
  Tensor gather(const Tensor& x) override { return x; }
};

}  // namespace vgen
