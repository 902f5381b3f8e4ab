#include "model/wan/image_condition.h"

#include <algorithm>
#include <cstring>

#include "model/image/vae_image_processor.h"

namespace vgen {

Tensor WanImageConditioner::image_tokens(const JobImages& images) const {
  if (!cfg_.clip) return Tensor();
  const int64_t n = images.last.defined() ? 2 : 1;
  Tensor first = clip_image_preprocess(images.first, cfg_.clip_processor);  // [3, S, S]
  Tensor pixels = Tensor::empty({n, first.dim(0), first.dim(1), first.dim(2)}, DType::kF32);  // [n, 3, S, S]
  std::memcpy(pixels.f32(), first.f32(), first.nbytes());
  if (n == 2) {
    Tensor last = clip_image_preprocess(images.last, cfg_.clip_processor);
    VGEN_CHECK(last.shape() == first.shape(), ExitCode::kInput, "the CLIP inputs of the first and the last image "
               "differ: {} and {}", first.str(), last.str());
    std::memcpy(pixels.f32() + first.numel(), last.f32(), last.nbytes());
  }
  const Tensor in = cfg_.clip->device() == Device::kCPU ? pixels : pixels.to(cfg_.clip->device());
  return cfg_.clip->penultimate_hidden_states(in);  // [n, 1 + patches, D]
}

Tensor WanImageConditioner::preprocess(const JobImages& images, int height, int width) const {
  Tensor first = vae_image_preprocess(images.first, height, width, cfg_.scale_spatial);  // [3, H, W]
  VGEN_CHECK(first.dim(1) == height && first.dim(2) == width, ExitCode::kInput,
             "generation.height/width {}x{} are not multiples of the VAE's spatial factor {}", height, width,
             cfg_.scale_spatial);
  const bool last = images.last.defined() && !cfg_.expand_timesteps;  // TI2V takes the first frame only
  const int64_t n = last ? 2 : 1;
  Tensor out = Tensor::empty({n, 3, first.dim(1), first.dim(2)}, DType::kF32);  // [n, 3, H, W]
  std::memcpy(out.f32(), first.f32(), first.nbytes());
  if (last) {
    Tensor l = vae_image_preprocess(images.last, height, width, cfg_.scale_spatial);
    std::memcpy(out.f32() + first.numel(), l.f32(), l.nbytes());
  }
  return out;
}

Tensor WanImageConditioner::condition_video(const Tensor& pre, int num_frames) const {
  const int64_t n = pre.dim(0), H = pre.dim(2), W = pre.dim(3), HW = H * W;
  const int64_t F = cfg_.expand_timesteps ? 1 : num_frames;  // TI2V: the first frame alone
  VGEN_CHECK(n == 1 || F >= 2, ExitCode::kInput, "a first and a last image need at least 2 frames, got {}", F);
  Tensor video = Tensor::zeros({1, 3, F, H, W}, DType::kF32);  // [1, 3, F, H, W]: image, zeros (, last image)
  for (int64_t c = 0; c < 3; ++c) {
    std::memcpy(video.f32() + (c * F) * HW, pre.f32() + c * HW, size_t(HW) * sizeof(float));
    if (n == 2) std::memcpy(video.f32() + (c * F + F - 1) * HW, pre.f32() + (3 + c) * HW, size_t(HW) * sizeof(float));
  }
  return video;
}

Tensor wan_i2v_mask(const Shape& s, int scale_temporal, bool has_last) {
  const int64_t T = s[2], hw = s[3] * s[4], st = scale_temporal;
  const int64_t F = (T - 1) * st + 1;  // pixel frames
  Tensor mask = Tensor::zeros({1, st, T, s[3], s[4]}, DType::kF32);  // [1, st, T, h, w]
  // Slot p = st·t + j holds pixel frame max(0, p − (st − 1)): the first frame fills st slots.
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < st; ++j) {
      const int64_t f = std::max<int64_t>(0, st * t + j - (st - 1));
      if (f == 0 || (has_last && f == F - 1)) std::fill_n(mask.f32() + (j * T + t) * hw, hw, 1.0f);
    }
  return mask;
}

ImageCondition WanImageConditioner::finish(const Tensor& encoded, const Shape& s, bool has_last) const {
  ImageCondition c;
  VGEN_CHECK(encoded.ndim() == 5 && encoded.dim(1) == s[1] && encoded.dim(3) == s[3] && encoded.dim(4) == s[4],
             ExitCode::kInternal, "encoded condition {} does not fit latents {}", encoded.str(), shape_str(s));
  if (cfg_.expand_timesteps) {
    c.fixed_latents = encoded.narrow(0, 1).clone();  // [1, C, 1, h, w]
    return c;
  }
  VGEN_CHECK(encoded.dim(2) == s[2], ExitCode::kInternal, "encoded condition {} has not the latents' {} frames",
             encoded.str(), s[2]);
  Tensor mask = wan_i2v_mask(s, cfg_.scale_temporal, has_last);  // [1, st, T, h, w]
  const int64_t st = mask.dim(1), C = encoded.dim(1), per = s[2] * s[3] * s[4];
  c.extra_channels = Tensor::empty({1, st + C, s[2], s[3], s[4]}, DType::kF32);  // [1, st + C, T, h, w]
  std::memcpy(c.extra_channels.f32(), mask.f32(), mask.nbytes());
  std::memcpy(c.extra_channels.f32() + st * per, encoded.f32(), size_t(C * per) * sizeof(float));
  return c;
}

}  // namespace vgen
