// Spatial context of a VAE encode: the decoder's (vae_spatial.h: causal conv inputs with halos,
// whole-frame gathers) plus the input of the downsamplers' stride-2 conv, whose ZeroPad2d((0, 1, 0, 1))
// makes it read one row/col past the end of this rank's part and none before it. One rank holds the
// whole frame (LocalEncoderContext); the parallel encoder (vae_encoder_parallel.h) splits the frame
// along height or width.
#pragma once
#include "model/wan/vae/vae_spatial.h"

namespace vgen {

class VaeEncoderContext : public VaeSpatialContext {
 public:
  // The stride-2 conv's input for this rank's part x (the device's layout): x, extended along the
  // split dim by the next rank's first row/col (zeros past the frame's end, the pad's row/col), and
  // `pad`, the zero padding the conv still adds (the pad's bottom row / right col where not extended).
  virtual Tensor down_conv_input(const Tensor& x, Conv3dPad& pad) = 0;
};

class LocalEncoderContext final : public VaeEncoderContext {
 public:
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override {
    return local_.conv_input(shape, dt, device, halo, alloc, fill, pad);
  }
  Tensor gather(const Tensor& x) override { return x; }
  Tensor down_conv_input(const Tensor& x, Conv3dPad& pad) override {
    pad = {0, 1, 0, 1};
    return x;
  }

 private:
  LocalSpatialContext local_;
};

}  // namespace vgen
