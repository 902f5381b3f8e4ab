// The condition image of the Wan image-to-video pipelines as diffusers' VaeImageProcessor
// .preprocess(image, height, width) prepares it for the VAE (docs/images.md "VAE input"): the
// target size floored to multiples of the VAE's spatial scale factor, a Lanczos resize (none when
// the size already matches), then (x / 255) · 2 − 1 in float32.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// rgb: CPU u8 [H, W, 3] → f32 [3, h, w] in [-1, 1], h = height − height % vae_scale_factor (w alike).
Tensor vae_image_preprocess(const Tensor& rgb, int64_t height, int64_t width, int64_t vae_scale_factor);

}  // namespace vgen
