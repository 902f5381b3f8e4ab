// Parallel VAE decode (parallel_reference.md §2.10, §7.3), on the host or the GPU alike: the latent
// frame is split along height or width over the `vae` communicator's ranks (near-equal parts: the
// first `rem` ranks get one more row/col); every conv with a spatial kernel k > 1 receives (k−1)/2
// rows/cols from each neighbour (zeros at the global edges, so every conv's padding is symmetric,
// what cuDNN's fast engines want); the causal temporal cache stores halo-extended frames, so cached
// frames never need a second exchange; upsampling doubles the local extents; attention gathers
// keys/values of the whole frame; Wan 2.2's DupUp3D shortcut is pixel-local (no exchange); the
// output is all-gathered chunk by chunk on every rank, then unpatchified when the VAE patchifies. Halo
// rows/cols are strided 2-D copies in the activation layout of the decoder's device
// (ops/vae_ops.h); the communicator moves tensors of that device (MPI on the host, NCCL on the GPU).
// The result equals the single-rank decode up to fp32 rounding.
// It lives beside the decoder it splits: lib/parallel stays below lib/model in the layering.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/parallel_config.h"
#include "dist/communicator.h"
#include "dist/mesh.h"
#include "model/wan/vae/vae_decoder.h"

namespace vgen {

// VaeSplitDim: config/parallel_config.h (parallel_config.parallel_vae_split_dim).

// Near-equal parts of `extent` over `parts` ranks: the first extent % parts get one more.
std::vector<int64_t> vae_split_sizes(int64_t extent, int parts);

// Checked split of latents z [B, z_dim, T, H, W] over `parts` ranks: every rank's extent along
// `dim` and where `rank`'s part starts. kRecipe when the extent is smaller than `parts`.
struct VaeSplitPlan {
  std::vector<int64_t> sizes;
  int64_t start = 0;
};
VaeSplitPlan vae_split_plan(const WanVaeConfig& cfg, const Tensor& z, int parts, int rank, VaeSplitDim dim);

// Halo exchange and gathers for activations split along `dim` over `comm`. `base` holds every
// rank's extent at the latent resolution; at a finer level the extents scale with the local one
// (×2 per spatial upsampling).
class HaloSpatialContext final : public VaeSpatialContext {
 public:
  HaloSpatialContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base);
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, const VaeBufferAlloc& alloc,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override;
  Tensor gather(const Tensor& x) override;

 private:
  std::vector<int64_t> extents_for(const Tensor& x) const;  // every rank's extent at x's level
  Communicator& comm_;
  VaeSplitDim dim_;
  std::vector<int64_t> base_;
};

// z [B, z_dim, T, H, W] (the same full latents on every rank of `comm`, any device) → the full video
// [B, video_channels, F, s·H, s·W] (vae_video_shape) f32 on the decoder's device of every rank.
// Collective over `comm` (a communicator of the decoder's device); kRecipe when the split extent is
// smaller than comm.size().
Tensor parallel_vae_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator& comm, VaeSplitDim dim);

// The decode step of a replica's VAE group member: `vae` is the group's communicator of the
// decoder's device (host: Mesh::vae; device: device_vae_communicator); null → undefined tensor (not
// a member, no collective); one rank → dec.decode(z); else the split decode.
Tensor vae_group_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator* vae, VaeSplitDim dim);

// The VAE group of `host` as a device communicator: null on ranks outside the group, a self
// communicator for a group of one, else an NCCL communicator over the group's ranks (built once per
// host group and cached; collective over the group the first time). Selects this rank's device
// first. Throws kUsage in a CPU-only build.
std::shared_ptr<Communicator> device_vae_communicator(const Mesh& host);

}  // namespace vgen
