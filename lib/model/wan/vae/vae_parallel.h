// Parallel VAE decode (parallel_reference.md §2.10, §7.3): the latent frame is split along height
// or width over the `vae` communicator's ranks (near-equal parts: the first `rem` ranks get one more
// row/col); every conv with a spatial kernel k > 1 receives (k−1)/2 rows/cols from each neighbour
// (zeros at the global edges); the causal temporal cache stores halo-extended frames, so cached
// frames never need a second exchange; upsampling doubles the local extents; attention gathers
// keys/values of the whole frame; the output is all-gathered chunk by chunk on every rank.
// The result equals the single-rank decode up to fp32 rounding.
// It lives beside the decoder it splits: lib/parallel stays below lib/model in the layering.
#pragma once
#include <string>
#include <vector>

#include "config/parallel_config.h"
#include "dist/communicator.h"
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

// Halo exchange and gathers for activations [C, T, H, W] split along `dim` over `comm`.
// `base` holds every rank's extent at the latent resolution; at a finer level the extents scale
// with the local one (×2 per spatial upsampling).
class HaloSpatialContext final : public VaeSpatialContext {
 public:
  HaloSpatialContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base);
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, int64_t front,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override;
  Tensor gather(const Tensor& x) override;

 private:
  // x with `halo` rows/cols of the neighbours attached along the split dim; `pad` the zero padding
  // a stride-1 conv with (k−1)/2 = halo still needs (global frame edges and the unsplit dim).
  Tensor extend(const Tensor& x, int64_t halo, Conv3dPad& pad);
  std::vector<int64_t> extents_for(const Tensor& x) const;  // every rank's extent at x's level
  Communicator& comm_;
  VaeSplitDim dim_;
  std::vector<int64_t> base_;
};

// z [B, z_dim, T, H, W] (the same full latents on every rank of `comm`) → the full video
// [B, out_channels, F, s·H, s·W] on every rank. Collective over `comm`; kRecipe when the split
// extent is smaller than comm.size().
Tensor parallel_vae_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator& comm, VaeSplitDim dim);

// The decode step of a replica (Mesh::vae as `vae`): on members of the VAE group decodes z, split
// over the group when it has more than one rank, and returns the full video; returns an undefined
// tensor on ranks outside the group (vae == nullptr), which issue no collective.
Tensor vae_group_decode(const WanVaeDecoder& dec, const Tensor& z, Communicator* vae, VaeSplitDim dim);

}  // namespace vgen
