#include "model/cosmos3/latent_tokens.h"

#include "ops/device_ops.h"
#include "ops/embed.h"

namespace vgen {
namespace {

bool divides(int64_t H, int64_t W, int patch) { return H % patch == 0 && W % patch == 0; }

}  // namespace

std::array<int64_t, 3> latent_patch_grid(const Tensor& latents, int patch) {
  VGEN_ASSERT(latents.ndim() == 5 && latents.dim(0) == 1 && patch >= 1, "latent_patch_grid: latents {} patch {}",
              latents.str(), patch);
  return {latents.dim(2), (latents.dim(3) + patch - 1) / patch, (latents.dim(4) + patch - 1) / patch};
}

Tensor latents_to_tokens(const Tensor& latents, int patch) {
  const auto [T, Hp, Wp] = latent_patch_grid(latents, patch);
  const Tensor x = latents.to(Device::kCPU).to(DType::kF32);
  const int64_t C = x.dim(1), H = x.dim(3), W = x.dim(4), p = patch;
  Tensor tok = Tensor::zeros({T * Hp * Wp, p * p * C}, DType::kF32);  // [S, p·p·C]
  const float* src = x.f32();
  float* dst = tok.f32();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t hp = 0; hp < Hp; ++hp)
      for (int64_t wp = 0; wp < Wp; ++wp) {
        float* row = dst + ((t * Hp + hp) * Wp + wp) * p * p * C;
        for (int64_t i = 0; i < p; ++i)
          for (int64_t j = 0; j < p; ++j) {
            const int64_t h = hp * p + i, w = wp * p + j;
            if (h >= H || w >= W) continue;  // the zero padding
            for (int64_t c = 0; c < C; ++c) row[(c * p + i) * p + j] = src[((c * T + t) * H + h) * W + w];
          }
      }
  return tok.to(latents.device());
}

Tensor tokens_to_latents(const Tensor& tokens, int patch, int64_t C, int64_t T, int64_t H, int64_t W,
                         const std::vector<int64_t>& noisy) {
  const int64_t p = patch, Hp = (H + p - 1) / p, Wp = (W + p - 1) / p;
  const Tensor x = tokens.to(Device::kCPU).to(DType::kF32);
  VGEN_ASSERT(x.ndim() == 2 && x.dim(0) == int64_t(noisy.size()) * Hp * Wp && x.dim(1) == p * p * C,
              "tokens_to_latents: tokens {} for {} noisy frames of {}x{} patches, C {}", x.str(), noisy.size(), Hp,
              Wp, C);
  Tensor out = Tensor::zeros({1, C, T, H, W}, DType::kF32);  // [1, C, T, H, W]
  const float* src = x.f32();
  float* dst = out.f32();
  for (size_t k = 0; k < noisy.size(); ++k) {
    const int64_t t = noisy[k];
    VGEN_ASSERT(t >= 0 && t < T, "tokens_to_latents: frame {} of {}", t, T);
    for (int64_t hp = 0; hp < Hp; ++hp)
      for (int64_t wp = 0; wp < Wp; ++wp) {
        const float* row = src + ((int64_t(k) * Hp + hp) * Wp + wp) * p * p * C;
        for (int64_t i = 0; i < p; ++i)
          for (int64_t j = 0; j < p; ++j) {
            const int64_t h = hp * p + i, w = wp * p + j;
            if (h >= H || w >= W) continue;  // padding is cropped
            for (int64_t c = 0; c < C; ++c) dst[((c * T + t) * H + h) * W + w] = row[(i * p + j) * C + c];
          }
      }
  }
  return out.to(tokens.device());
}

Tensor patch_tokens(const Tensor& latents, int patch, Device device, DType dtype) {
  const auto [T, Hp, Wp] = latent_patch_grid(latents, patch);
  const int64_t S = T * Hp * Wp, P = latents.dim(1) * patch * patch;
  if (!divides(latents.dim(3), latents.dim(4), patch))
    return cast(latents_to_tokens(latents, patch).to(device), dtype).reshape({1, S, P});  // [1, S, C·p·p]
  // The host reference takes f32; the device kernel any float dtype.
  const Tensor x = device == Device::kCPU ? latents.to(Device::kCPU).to(DType::kF32) : latents.to(device);
  return patchify(x, {1, patch, patch}, 0, S, dtype);  // [1, S, C·p·p]
}

Tensor tokens_to_video(const Tensor& tokens, int patch, int64_t C, int64_t T, int64_t H, int64_t W) {
  VGEN_ASSERT(tokens.ndim() == 3 && tokens.dim(0) == 1, "tokens_to_video: tokens {}", tokens.str());
  if (divides(H, W, patch)) {
    const Tensor t = tokens.is_cpu() ? tokens.to(DType::kF32) : tokens;
    return unpatchify(t, {1, patch, patch}, C, T, H, W, DType::kF32);  // [1, C, T, H, W]
  }
  std::vector<int64_t> frames;
  for (int64_t f = 0; f < T; ++f) frames.push_back(f);
  return tokens_to_latents(tokens[0], patch, C, T, H, W, frames);
}

}  // namespace vgen
