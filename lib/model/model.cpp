#include "model/model.h"

#include "model/latents.h"

namespace vgen {

const char* image_conditioning_name(ImageConditioning c) {
  switch (c) {
    case ImageConditioning::kNone: return "none";
    case ImageConditioning::kOptional: return "optional";
    case ImageConditioning::kRequired: return "required";
  }
  return "?";
}

Shape ModelTraits::latent_shape(int64_t batch, int num_frames, int height, int width) const {
  return vgen::latent_shape(batch, latent_channels, num_frames, height, width, scale_temporal, scale_spatial);
}

Tensor VideoAutoencoder::encode(const Tensor& video) const {
  VGEN_THROW(ExitCode::kModel, "this model's autoencoder does not encode (video {})", video.str());
}

}  // namespace vgen
