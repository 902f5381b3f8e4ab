// Parallel VAE encode, on the host or the GPU alike: the frame is split along height or width over
// the `vae` communicator's ranks in near-equal parts of the latent rows/cols (vae_split_sizes), each
// rank taking the pixels above its latent part, so every part is even at every level above the
// latents and patchify, the stride-2 convs and AvgDown3D stay rank-local. The causal convs exchange
// halos and the mid-block attention gathers through the parallel decoder's HaloSpatialContext; the
// downsamplers' stride-2 conv receives the next rank's first row/col (the last rank's is the pad's
// zero row/col); the moments are all-gathered chunk by chunk on every rank. Equals the single-rank
// encode up to fp32 rounding.
#pragma once
#include <memory>
#include <vector>

#include "model/wan/vae/vae_encoder.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {

// The encoder's context for activations split along `dim` over `comm`; `base` holds every rank's
// extent at the latent resolution (extents scale ×2 per level above it).
class HaloEncoderContext final : public VaeEncoderContext {
 public:
  HaloEncoderContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base);
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override {
    return halo_.conv_input(shape, dt, device, halo, alloc, fill, pad);
  }
  Tensor gather(const Tensor& x) override { return halo_.gather(x); }
  Tensor down_conv_input(const Tensor& x, Conv3dPad& pad) override;

 private:
  HaloSpatialContext halo_;
  Communicator& comm_;
  VaeSplitDim dim_;
};

// video [B, in, F, H, W] (the same full video on every rank of `comm`, any device) → the moments
// [B, 2·z_dim, T, h, w] f32 on the encoder's device of every rank (as encode_moments). Collective
// over `comm` (a communicator of the encoder's device); kRecipe when the latent extent along `dim`
// is smaller than comm.size().
Tensor parallel_vae_encode(const WanVaeEncoder& enc, const Tensor& video, Communicator& comm, VaeSplitDim dim);

// The encode step of a VAE group member: `vae` the group's communicator of the encoder's device
// (host: Mesh::vae; device: device_vae_communicator); null → undefined tensor (no collective); one
// rank → enc.encode_moments(video); else the split encode.
Tensor vae_group_encode(const WanVaeEncoder& enc, const Tensor& video, Communicator* vae, VaeSplitDim dim);

}  // namespace vgen
