// The Wan family's image conditioning (model.h ImageConditioner), as diffusers'
// WanImageToVideoPipeline prepares it (docs/images.md "Conditioning"):
//   - Wan 2.1 I2V / FLF2V and Wan 2.2 I2V-A14B: the condition video is the first image followed by
//     zeros (FLF2V: zeros, then the last image), encoded whole; the model input appends 4 mask
//     channels (1 on the latent positions of the given frames; the first frame's mask repeated over
//     the first latent frame's scale_temporal slots) and the 16 condition channels. Wan 2.1 adds
//     the CLIP tokens of the image(s) (penultimate hidden states) when the checkpoint has an
//     image encoder and its transformer an image path.
//   - Wan 2.2 TI2V (expand_timesteps): the first image alone is encoded; its latent frame is known
//     (ImageCondition::fixed_latents): clean in the model input, at timestep 0, and in the result.
#pragma once
#include <memory>
#include <optional>

#include "model/clip/clip_vision.h"
#include "model/image/clip_image_processor.h"
#include "model/model.h"

namespace vgen {

struct WanImageConditionConfig {
  bool expand_timesteps = false;  // Wan 2.2 TI2V
  int scale_spatial = 8, scale_temporal = 4;
  // The image encoder (Wan 2.1 I2V / FLF2V): null when the model takes no image tokens.
  std::shared_ptr<const ClipVisionEncoder> clip;
  ClipImageProcessorConfig clip_processor;
};

class WanImageConditioner final : public ImageConditioner {
 public:
  explicit WanImageConditioner(WanImageConditionConfig cfg) : cfg_(std::move(cfg)) {}
  Tensor image_tokens(const JobImages& images) const override;
  Tensor preprocess(const JobImages& images, int height, int width) const override;
  Tensor condition_video(const Tensor& preprocessed, int num_frames) const override;
  ImageCondition finish(const Tensor& encoded, const Shape& latent_shape, bool has_last) const override;

 private:
  WanImageConditionConfig cfg_;
};

// The 4 mask channels of Wan I2V [1, scale_temporal, T, h, w] for latents of `latent_shape`: 1 at
// the first frame's slots, and at the last frame's with `has_last`.
Tensor wan_i2v_mask(const Shape& latent_shape, int scale_temporal, bool has_last);

}  // namespace vgen
