// Golden cases vae_encode (Wan 2.1) and vae22_encode (Wan 2.2): video [1, 3, F, H, W] in [-1, 1] →
// the posterior's mode, mean and (clamped) logvar [1, z, T, H/s, W/s], not normalised. Every rank
// encodes the whole video alone (the encoder has no split across ranks), so every rank reports a
// real comparison. device: cuda encodes on the GPU in the recipe's precision, the video uploaded
// one chunk at a time.
#include <filesystem>

#include "dist/device_mesh.h"
#include "model/golden_case.h"
#include "model/wan/family.h"
#include "model/wan/vae/vae_encoder.h"

namespace vgen {

void golden_vae_encode(GoldenCase& c) {
  const std::string vae_dir = (std::filesystem::path(c.model_dir()) / "vae").string();
  const Tensor video = c.tensors.get_f32("video");  // [1, 3, F, H, W]
  WanVaeOptions opt;
  if (c.recipe->is_cuda()) {
    select_mesh_device();
    opt.device = Device::kCUDA;
    opt.dtype = c.recipe->compute_dtype();
  }
  const WanVaeEncoder enc = WanVaeEncoder::load(vae_dir, opt);
  const Tensor moments = enc.encode_moments(video).to(Device::kCPU);  // [1, 2z, T, h, w]
  const int64_t z = enc.config().z_dim;
  const Tensor mean = moments.reshape({moments.dim(1), moments.numel() / moments.dim(1)}).narrow(0, z).clone().reshape(
      {1, z, moments.dim(2), moments.dim(3), moments.dim(4)});  // [1, z, T, h, w]
  const double tol = c.bf16 ? 3e-2 : 1e-4;
  c.rel_l2("latents_mode", mean, c.tensors.get_f32("latents_mode"), tol);
  c.rel_l2("latents_mean", mean, c.tensors.get_f32("latents_mean"), tol);
  c.rel_l2("latents_logvar", vae_posterior_logvar(moments), c.tensors.get_f32("latents_logvar"), tol);
}

}  // namespace vgen
