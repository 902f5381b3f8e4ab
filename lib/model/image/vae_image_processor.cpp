#include "model/image/vae_image_processor.h"

#include "ops/image_resize.h"

namespace vgen {

Tensor vae_image_preprocess(const Tensor& rgb, int64_t height, int64_t width, int64_t vae_scale_factor) {
  VGEN_ASSERT(vae_scale_factor > 0, "vae_scale_factor {}", vae_scale_factor);
  const int64_t h = height - height % vae_scale_factor, w = width - width % vae_scale_factor;
  VGEN_CHECK(h > 0 && w > 0, ExitCode::kInput,
             "cannot prepare a {}x{} (height x width) condition image: the VAE needs multiples of {}", height, width,
             vae_scale_factor);
  const Tensor resized = image_resize(rgb, h, w, ResampleFilter::kLanczos);  // [h, w, 3]
  Tensor out = Tensor::empty({3, h, w}, DType::kF32);                      // [3, h, w]
  const uint8_t* src = resized.data<uint8_t>();
  float* dst = out.f32();
  const int64_t plane = h * w;
  for (int64_t i = 0; i < plane; ++i) {
    for (int64_t c = 0; c < 3; ++c) {
      // float32 as NumPy and PyTorch compute it: x / 255, then 2 · v − 1, each step rounded.
      const float v = float(src[i * 3 + c]) / 255.0f;
      dst[c * plane + i] = 2.0f * v - 1.0f;
    }
  }
  return out;
}

}  // namespace vgen
