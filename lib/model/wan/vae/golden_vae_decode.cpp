// Golden cases vae_decode (Wan 2.1) and vae22_decode (Wan 2.2: residual up blocks, unpatchify):
// raw latents (no mean/std step) → video [1, 3, F, sH, sW] in [-1, 1], s = 8 or 16 (the VAE's config).
// With parallel_vae_size > 1 the VAE group decodes split across its ranks; the other ranks of the
// replica receive the video by a broadcast, so every rank reports a real comparison.
// device: cuda decodes on the GPU (WanVaeDecoder on the device in the recipe's precision; the split decode
// over an NCCL communicator of the VAE group).
#include <filesystem>

#include "dist/bootstrap.h"
#include "dist/device_mesh.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_parallel.h"
#include "model/golden_case.h"
#include "model/wan/family.h"

namespace vgen {

void golden_vae_decode(GoldenCase& c) {
  const std::string vae_dir = (std::filesystem::path(c.model_dir()) / "vae").string();
  Tensor latents = c.tensors.get_f32("latents");  // [1, z_dim, T, H, W]
  Tensor ref = c.tensors.get_f32("video");        // [1, 3, F, sH, sW]
  Mesh& mesh = *c.mesh;
  const bool decoder_rank = mesh.vae != nullptr;
  const bool cuda = c.recipe->is_cuda();
  Communicator* replica = mesh.replica && mesh.replica->size() > 1 ? mesh.replica.get() : nullptr;

  // Load (the CPU decoder on every rank; on the GPU only the VAE ranks need weights); agree before
  // any collective.
  std::unique_ptr<WanVaeDecoder> dec;
  WanVaeConfig cfg;
  std::string load_error;
  try {
    if (!cuda) {
      dec = std::make_unique<WanVaeDecoder>(WanVaeDecoder::load(vae_dir));
      cfg = dec->config();
    } else {
      cfg = load_wan_vae_config(vae_dir);
      if (decoder_rank) {
        select_mesh_device();
        WanVaeOptions opt;
        opt.device = Device::kCUDA;
        opt.dtype = c.recipe->compute_dtype();
        dec = std::make_unique<WanVaeDecoder>(WanVaeDecoder::load(vae_dir, opt));
      }
    }
  } catch (const Error& e) {
    load_error = e.message();
  }
  if (replica && any_rank_failed(*replica, !load_error.empty()) && load_error.empty())
    load_error = "another rank failed to load the VAE";
  VGEN_CHECK(load_error.empty(), ExitCode::kModel, "{}", load_error);

  Tensor video;
  std::string decode_error;
  ExitCode decode_code = ExitCode::kInternal;
  if (decoder_rank) {
    try {
      VaeSplitDim dim = c.recipe->parallel.parallel_vae_split_dim;
      // The VAE group's communicator of the decoder's device: NCCL on the GPU.
      std::shared_ptr<Communicator> group = cuda ? device_vae_communicator(mesh) : mesh.vae;
      video = vae_group_decode(*dec, latents, group.get(), dim).to(Device::kCPU);
    } catch (const Error& e) {
      decode_error = e.message();
      decode_code = e.code();
    }
  }
  // Ranks outside the VAE group wait in the broadcast below: agree on failure first.
  if (replica && any_rank_failed(*replica, !decode_error.empty()) && decode_error.empty())
    decode_error = "the VAE decode failed on another rank";
  VGEN_CHECK(decode_error.empty(), decode_code, "{}", decode_error);
  if (replica) {
    // VAE rank 0 is replica rank 0 (docs/architecture.md "The mesh and rank layout": the VAE group is ranks 0..P-1 of the cfg-0 group).
    // Every rank knows the output shape from the config, so the broadcast shapes always agree.
    if (!decoder_rank) video = Tensor::empty(vae_video_shape(cfg, latents.shape()), DType::kF32);
    replica->broadcast(video, 0);
  }
  c.rel_l2("video", video, ref, c.bf16 ? 3e-2 : 1e-4);
}

}  // namespace vgen
