// The image side of VideoPipeline::render (docs/images.md "Conditioning"): the replica leader
// reads the line's images, runs the family's image encoder and the autoencoder's encode, and shares
// the condition with the replica; a failure there fails the line alone, on every rank alike.
#include "core/device_fault.h"
#include "core/timer.h"
#include "dist/bootstrap.h"
#include "dist/broadcast_tensor.h"
#include "io/image_reader.h"
#include "pipeline/video_pipeline.h"

namespace vgen {

ImageCondition VideoPipeline::make_image_condition(const VideoJob& job, VideoOutput& out) const {
  VGEN_CHECK(model_.image_conditioner && model_.autoencoder, ExitCode::kInput,
             "{} is not conditioned on images (the line has `image`)", model_.traits.variant);
  const ImageConditioner& ic = *model_.image_conditioner;
  JobImages images;
  images.first = read_image(job.image);  // u8 [H, W, 3]
  if (!job.last_image.empty()) images.last = read_image(job.last_image);
  Timer t_image;
  Tensor tokens = ic.image_tokens(images);  // [n, L_img, D_img] or undefined
  out.seconds.image_encode = t_image.seconds();
  Timer t_vae;
  const DeviceAllocPhase phase("encoding the condition images (VAE)");  // named in OOM messages
  Tensor pre = ic.preprocess(images, job.height, job.width);            // [n, 3, H, W] in [-1, 1]
  Tensor video = ic.condition_video(pre, job.num_frames);               // [1, 3, F_c, H, W]
  Tensor encoded = model_.autoencoder->encode(video);                   // [1, C, T_c, h, w] normalised
  const Shape shape = model_.traits.latent_shape(1, job.num_frames, job.height, job.width);
  ImageCondition c = ic.finish(encoded, shape, images.last.defined());
  out.seconds.vae_encode = t_vae.seconds();
  c.image_tokens = tokens.defined() ? tokens.to(Device::kCPU).to(DType::kF32) : Tensor();
  out.condition_images = pre;
  return c;
}

ImageCondition VideoPipeline::condition_on_images(const VideoJob& job, VideoOutput& out) {
  ImageCondition c;
  bool failed = false;
  std::string error;
  if (mesh_.is_replica_leader()) {
    try {
      c = make_image_condition(job, out);
    } catch (const Error& e) {
      // A device fault is not the line's: it ends the job (the error's handler aborts every rank).
      if (e.code() == ExitCode::kDeviceOutOfMemory || e.code() == ExitCode::kDistributed) throw;
      failed = true;
      error = e.message();
    }
  }
  // Agree before the broadcasts so a failure on the leader never leaves the others waiting.
  if (any_rank_failed(*mesh_.replica, failed))
    VGEN_THROW(ExitCode::kInput, "conditioning on the line's images failed{}",
               error.empty() ? " on the replica leader" : ": " + error);
  broadcast_tensor(*mesh_.replica, c.image_tokens, 0);
  broadcast_tensor(*mesh_.replica, c.extra_channels, 0);
  broadcast_tensor(*mesh_.replica, c.fixed_latents, 0);
  return c;
}

}  // namespace vgen
