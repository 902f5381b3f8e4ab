#include "model/cosmos3/image_condition.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/image_resize_aa.h"

namespace vgen {

Tensor cosmos3_preprocess_image(const Tensor& rgb, int height, int width) {
  VGEN_CHECK(rgb.ndim() == 3 && rgb.dim(2) == 3 && rgb.dtype() == DType::kU8, ExitCode::kInput,
             "cosmos3: the image must be u8 [H, W, 3], got {}", rgb.str());
  const int64_t sh = rgb.dim(0), sw = rgb.dim(1), plane = sh * sw;
  Tensor chw = Tensor::empty({3, sh, sw}, DType::kF32);  // [3, H_s, W_s] in [0, 255]
  const uint8_t* src = rgb.data<uint8_t>();
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < plane; ++i) chw.f32()[c * plane + i] = float(src[i * 3 + c]);
  // The pipeline's Python arithmetic in double: cover the frame, then crop the centre (round half even).
  const double scale = std::max(double(width) / double(sw), double(height) / double(sh));
  const int64_t rh = int64_t(std::ceil(scale * double(sh))), rw = int64_t(std::ceil(scale * double(sw)));
  const Tensor resized = image_resize_bilinear_aa(chw, rh, rw);  // [3, rh, rw]
  const int64_t top = int64_t(std::nearbyint(double(rh - height) / 2.0));
  const int64_t left = int64_t(std::nearbyint(double(rw - width) / 2.0));
  Tensor out = Tensor::empty({1, 3, height, width}, DType::kF32);  // [1, 3, H, W]
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        const float v = resized.f32()[(c * rh + top + y) * rw + left + x];
        const float q = std::clamp(std::nearbyint(v), 0.0f, 255.0f);  // torch.round: half to even
        out.f32()[(c * height + y) * width + x] = q / 127.5f - 1.0f;
      }
  return out;
}

Tensor Cosmos3ImageConditioner::preprocess(const JobImages& images, int height, int width) const {
  VGEN_CHECK(images.first.defined(), ExitCode::kInput, "cosmos3: image to video needs an image");
  VGEN_CHECK(!images.last.defined(), ExitCode::kInput, "cosmos3 takes a first frame only (the line has last_image)");
  return cosmos3_preprocess_image(images.first, height, width);
}

Tensor Cosmos3ImageConditioner::condition_video(const Tensor& pre, int num_frames) const {
  VGEN_CHECK(pre.ndim() == 4 && pre.dim(0) == 1 && pre.dim(1) == 3 && num_frames >= 1, ExitCode::kInternal,
             "cosmos3: condition image {} for {} frames", pre.str(), num_frames);
  const int64_t F = num_frames, H = pre.dim(2), W = pre.dim(3), plane = H * W;
  Tensor video = Tensor::empty({1, 3, F, H, W}, DType::kF32);  // [1, 3, F, H, W]: the image on every frame
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t f = 0; f < F; ++f)
      std::memcpy(video.f32() + (c * F + f) * plane, pre.f32() + c * plane, size_t(plane) * sizeof(float));
  return video;
}

ImageCondition Cosmos3ImageConditioner::finish(const Tensor& encoded, const Shape& s, bool has_last) const {
  VGEN_CHECK(encoded.defined() && encoded.ndim() == 5 && encoded.dim(0) == 1 && encoded.dim(1) == s[1] &&
                 encoded.dim(2) == s[2] && encoded.dim(3) == s[3] && encoded.dim(4) == s[4],
             ExitCode::kInternal, "cosmos3: encoded condition {} for latents {}", encoded.defined() ? encoded.str() : "none",
             shape_str(s));
  (void)has_last;
  const Tensor e = encoded.to(Device::kCPU).to(DType::kF32);
  const int64_t C = s[1], T = s[2], hw = s[3] * s[4];
  ImageCondition c;
  c.fixed_latents = Tensor::empty({1, C, 1, s[3], s[4]}, DType::kF32);  // [1, C, 1, h, w]: latent frame 0
  for (int64_t ch = 0; ch < C; ++ch)
    std::memcpy(c.fixed_latents.f32() + ch * hw, e.f32() + ch * T * hw, size_t(hw) * sizeof(float));
  return c;
}

}  // namespace vgen
