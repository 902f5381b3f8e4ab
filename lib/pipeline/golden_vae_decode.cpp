// Golden case vae_decode: raw latents (no mean/std step) → video [1, 3, F, 8H, 8W] in [-1, 1].
// With parallel_vae_size > 1 the VAE group decodes split across its ranks; the other ranks of the
// replica receive the video by a broadcast, so every rank reports a real comparison.
#include <filesystem>

#include "dist/bootstrap.h"
#include "model/wan/vae_decoder.h"
#include "parallel/parallel_vae.h"
#include "pipeline/golden.h"

namespace vgen {

void golden_vae_decode(GoldenCase& c) {
  const std::string vae_dir = (std::filesystem::path(c.model_dir()) / "vae").string();
  Tensor latents = c.tensors.get_f32("latents");  // [1, 16, T, H, W]
  Tensor ref = c.tensors.get_f32("video");        // [1, 3, F, 8H, 8W]
  Mesh& mesh = *c.mesh;
  const bool decoder_rank = mesh.vae != nullptr;
  Communicator* replica = mesh.replica && mesh.replica->size() > 1 ? mesh.replica.get() : nullptr;

  // Load on every rank (same files, same outcome); agree before any collective.
  std::unique_ptr<WanVaeDecoder> dec;
  std::string load_error;
  try {
    dec = std::make_unique<WanVaeDecoder>(WanVaeDecoder::load(vae_dir));
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
      VaeSplitDim dim = parse_vae_split_dim(c.recipe->parallel.parallel_vae_split_dim);
      video = vae_group_decode(*dec, latents, mesh.vae.get(), dim);
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
    // VAE rank 0 is replica rank 0 (DESIGN.md: the VAE group is ranks 0..P-1 of the cfg-0 group).
    // Every rank knows the output shape from the config, so the broadcast shapes always agree.
    const WanVaeConfig& cfg = dec->config();
    const int64_t s = cfg.spatial_upscale();
    if (!decoder_rank)
      video = Tensor::empty({latents.dim(0), cfg.out_channels, cfg.output_frames(latents.dim(2)), s * latents.dim(3),
                             s * latents.dim(4)},
                            DType::kF32);
    replica->broadcast(video, 0);
  }
  c.rel_l2("video", video, ref, c.bf16 ? 3e-2 : 1e-4);
}

}  // namespace vgen
