// The image side of VideoPipeline::render (docs/images.md "Conditioning"): the replica leader reads
// the line's images, runs the family's image encoder and prepares the condition video; the ranks
// that decode encode it together (split like the decode); the leader makes the condition and shares
// it with the replica. A failure on the leader fails the line alone, on every rank alike.
#include <functional>

#include "core/device_fault.h"
#include "core/timer.h"
#include "dist/bootstrap.h"
#include "dist/broadcast_tensor.h"
#include "io/image_reader.h"
#include "pipeline/video_pipeline.h"

namespace vgen {
namespace {

// Runs `leader_work` on the replica leader; every rank of the replica then agrees whether it failed
// (kInput: the line fails) before any later collective.
void on_leader(const Mesh& mesh, const std::function<void()>& leader_work) {
  bool failed = false;
  std::string error;
  if (mesh.is_replica_leader()) {
    try {
      leader_work();
    } catch (const Error& e) {
      // A device fault is not the line's: it ends the job (the error's handler aborts every rank).
      if (e.code() == ExitCode::kDeviceOutOfMemory || e.code() == ExitCode::kDistributed) throw;
      failed = true;
      error = e.message();
    }
  }
  if (any_rank_failed(*mesh.replica, failed))
    VGEN_THROW(ExitCode::kInput, "conditioning on the line's images failed{}",
               error.empty() ? " on the replica leader" : ": " + error);
}

}  // namespace

ImageCondition VideoPipeline::condition_on_images(const VideoJob& job, VideoOutput& out) {
  Tensor video, tokens;  // the condition video [1, 3, F_c, H, W] and the image tokens, on the leader
  bool has_last = false;
  on_leader(mesh_, [&] {
    VGEN_CHECK(model_.image_conditioner && model_.autoencoder, ExitCode::kInput,
               "{} is not conditioned on images (the line has `image`)", model_.traits.variant);
    const ImageConditioner& ic = *model_.image_conditioner;
    JobImages images;
    images.first = read_image(job.image);  // u8 [H, W, 3]
    if (!job.last_image.empty()) images.last = read_image(job.last_image);
    has_last = images.last.defined();
    Timer t_image;
    tokens = ic.image_tokens(images);  // [n, L_img, D_img] or undefined
    if (tokens.defined()) tokens = tokens.to(Device::kCPU).to(DType::kF32);
    out.seconds.image_encode = t_image.seconds();
    out.condition_images = ic.preprocess(images, job.height, job.width);  // [n, 3, H, W] in [-1, 1]
    video = ic.condition_video(out.condition_images, job.num_frames);     // [1, 3, F_c, H, W]
  });
  Timer t_vae;
  Tensor encoded;  // [1, C, T_c, h, w] normalised, on the ranks that decode
  if (model_.autoencoder) {
    const DeviceAllocPhase phase("encoding the condition images (VAE)");  // named in OOM messages
    if (mesh_.vae && mesh_.vae->size() > 1) broadcast_tensor(*mesh_.vae, video, 0);  // the leader is its rank 0
    encoded = model_.autoencoder->encode(video);  // collective over the VAE group
  }
  out.seconds.vae_encode = t_vae.seconds();
  ImageCondition c;
  on_leader(mesh_, [&] {
    const Shape shape = model_.traits.latent_shape(1, job.num_frames, job.height, job.width);
    c = model_.image_conditioner->finish(encoded, shape, has_last);
    c.image_tokens = tokens;
  });
  broadcast_tensor(*mesh_.replica, c.image_tokens, 0);
  broadcast_tensor(*mesh_.replica, c.extra_channels, 0);
  broadcast_tensor(*mesh_.replica, c.fixed_latents, 0);
  return c;
}

}  // namespace vgen
