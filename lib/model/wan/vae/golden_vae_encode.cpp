// Golden cases vae_encode (Wan 2.1) and vae22_encode (Wan 2.2): video [1, 3, F, H, W] in [-1, 1] →
// the posterior's mode, mean and (clamped) logvar [1, z, T, H/s, W/s], not normalised. With
// parallel_vae_size > 1 the VAE group encodes split across its ranks (every member gets the whole
// moments); the other ranks encode alone, so every rank reports a real comparison.
// device: cuda encodes on the GPU in the recipe's precision, the video uploaded one chunk at a time
// (the split encode over an NCCL communicator of the VAE group).
#include <filesystem>

#include "dist/bootstrap.h"
#include "dist/device_mesh.h"
#include "model/golden_case.h"
#include "model/wan/family.h"
#include "model/wan/vae/vae_encoder_parallel.h"

namespace vgen {

void golden_vae_encode(GoldenCase& c) {
  const std::string vae_dir = (std::filesystem::path(c.model_dir()) / "vae").string();
  const Tensor video = c.tensors.get_f32("video");  // [1, 3, F, H, W]
  Mesh& mesh = *c.mesh;
  const bool cuda = c.recipe->is_cuda();
  WanVaeOptions opt;
  if (cuda) {
    select_mesh_device();
    opt.device = Device::kCUDA;
    opt.dtype = c.recipe->compute_dtype();
  }
  // Load everywhere, agree before any collective.
  std::unique_ptr<WanVaeEncoder> enc;
  std::string load_error;
  try {
    enc = std::make_unique<WanVaeEncoder>(WanVaeEncoder::load(vae_dir, opt));
  } catch (const Error& e) {
    load_error = e.message();
  }
  if (mesh.world && mesh.world->size() > 1 && any_rank_failed(*mesh.world, !load_error.empty()) &&
      load_error.empty())
    load_error = "another rank failed to load the VAE";
  VGEN_CHECK(load_error.empty(), ExitCode::kModel, "{}", load_error);

  Tensor moments;  // [1, 2z, T, h, w]
  if (mesh.vae) {
    // The VAE group's communicator of the encoder's device: NCCL on the GPU.
    std::shared_ptr<Communicator> group = cuda ? device_vae_communicator(mesh) : mesh.vae;
    moments = vae_group_encode(*enc, video, group.get(), c.recipe->parallel.parallel_vae_split_dim);
  } else {
    moments = enc->encode_moments(video);
  }
  moments = moments.to(Device::kCPU);
  const int64_t z = enc->config().z_dim, S = moments.numel() / moments.dim(1);
  Tensor mean = Tensor::empty({1, z, moments.dim(2), moments.dim(3), moments.dim(4)}, DType::kF32);  // [1, z, T, h, w]
  std::copy_n(moments.f32(), z * S, mean.f32());
  const double tol = c.bf16 ? 3e-2 : 1e-4;
  c.rel_l2("latents_mode", mean, c.tensors.get_f32("latents_mode"), tol);
  c.rel_l2("latents_mean", mean, c.tensors.get_f32("latents_mean"), tol);
  c.rel_l2("latents_logvar", vae_posterior_logvar(moments), c.tensors.get_f32("latents_logvar"), tol);
}

}  // namespace vgen
