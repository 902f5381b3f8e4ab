// Cosmos 3's image to video (model.h ImageConditioner) as diffusers' Cosmos3OmniPipeline prepares it:
// the image resized to cover the frame (torch's bilinear antialiased interpolate, ops/image_resize_aa.h),
// centre-cropped and rounded to 8 bits (_preprocess_conditioning_image), repeated over every frame,
// encoded by the Wan 2.2 VAE and normalised; its first latent frame is known (ImageCondition::
// fixed_latents): the denoiser reads the zero timestep of its tokens as a clean frame (no timestep
// embedding, zero velocity). No image tokens, no extra channels.
#pragma once
#include "model/model.h"

namespace vgen {

// rgb: u8 [H_s, W_s, 3] → [1, 3, height, width] f32 in [-1, 1].
Tensor cosmos3_preprocess_image(const Tensor& rgb, int height, int width);

class Cosmos3ImageConditioner final : public ImageConditioner {
 public:
  Tensor image_tokens(const JobImages& images) const override { return Tensor(); }
  Tensor preprocess(const JobImages& images, int height, int width) const override;
  Tensor condition_video(const Tensor& preprocessed, int num_frames) const override;
  ImageCondition finish(const Tensor& encoded, const Shape& latent_shape, bool has_last) const override;
};

}  // namespace vgen
