// Parallel VAE decode on the GPU: vae_parallel.h's algorithm (the frame split along height or
// width over the VAE group, halos from the neighbours for every spatial conv, attention keys and
// values gathered, the output all-gathered chunk by chunk) for the device decoder, over a device
// communicator (NCCL; a self communicator for one rank). Activations are channels-last, so halo
// rows/cols are strided 2-D copies; halo-extended conv inputs carry zeros at the global frame
// edges, which keeps every conv's padding symmetric (what cuDNN's fast engines want).
#pragma once
#include <memory>
#include <vector>

#include "dist/communicator.h"
#include "dist/mesh.h"
#include "model/wan/vae/vae_parallel.h"

namespace vgen {

class HaloDeviceContext final : public VaeSpatialContext {
 public:
  // `comm` moves device tensors (NCCL); `base` holds every rank's extent at the latent resolution.
  HaloDeviceContext(Communicator& comm, VaeSplitDim dim, std::vector<int64_t> base);
  Tensor conv_input(const Shape& shape, DType dt, Device device, int64_t halo, int64_t front,
                    const std::function<void(Tensor&)>& fill, Conv3dPad& pad) override;
  Tensor gather(const Tensor& x) override;

 private:
  std::vector<int64_t> extents_for(const Tensor& x) const;
  Communicator& comm_;
  VaeSplitDim dim_;
  std::vector<int64_t> base_;
};

// z [B, z_dim, T, H, W] (the same full latents on every rank of `comm`, any device) → the full
// video [B, out_channels, F, s·H, s·W] f32 on the device of every rank. Collective over `comm`;
// kRecipe when the split extent is smaller than comm.size().
Tensor parallel_vae_decode_device(const WanVaeDecoder& dec, const Tensor& z, Communicator& comm,
                                  VaeSplitDim dim);

// The decode step of a VAE group member on the GPU: `vae` is the group's device communicator
// (device_vae_communicator); null → undefined tensor (not a member, no collective); one rank →
// dec.decode(z); else the split decode.
Tensor vae_group_decode_device(const WanVaeDecoder& dec, const Tensor& z, Communicator* vae, VaeSplitDim dim);

// The VAE group of `host` as a device communicator: null on ranks outside the group, a self
// communicator for a group of one, else an NCCL communicator over the group's ranks (built once per
// host group and cached; collective over the group the first time). Selects this rank's device
// first. Throws kUsage in a CPU-only build.
std::shared_ptr<Communicator> device_vae_communicator(const Mesh& host);

}  // namespace vgen
