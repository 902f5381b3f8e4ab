#include "model/latents.h"

#include <filesystem>

#include "core/random.h"
#include "io/safetensors.h"

namespace vgen {

Shape latent_shape(int64_t batch, int64_t channels, int num_frames, int height, int width, int scale_temporal,
                   int scale_spatial) {
  VGEN_CHECK(num_frames >= 1 && height >= scale_spatial && width >= scale_spatial && scale_temporal >= 1 &&
                 scale_spatial >= 1,
             ExitCode::kRecipe, "generation size {}x{} with {} frames is too small for the VAE factors {}/{}", height,
             width, num_frames, scale_temporal, scale_spatial);
  return {batch, channels, int64_t((num_frames - 1) / scale_temporal + 1), int64_t(height / scale_spatial),
          int64_t(width / scale_spatial)};
}

Tensor make_initial_latents(const Shape& shape, const std::string& path, uint64_t seed) {
  if (path.empty()) return randn(shape, seed);
  VGEN_CHECK(std::filesystem::exists(path), ExitCode::kInput, "generation.initial_latents: no file {}", path);
  WeightStore ws = WeightStore::open(path);
  VGEN_CHECK(ws.has("initial_latents"), ExitCode::kInput, "{}: no tensor 'initial_latents'", path);
  Tensor t = ws.get("initial_latents");
  VGEN_CHECK(t.shape() == shape, ExitCode::kInput, "{}: initial_latents has shape {}, the generation needs {}", path,
             shape_str(t.shape()), shape_str(shape));
  VGEN_CHECK(t.dtype() == DType::kF32 || t.dtype() == DType::kBF16 || t.dtype() == DType::kF16, ExitCode::kInput,
             "{}: initial_latents has dtype {}, expected a float type", path, dtype_name(t.dtype()));
  return t.to(DType::kF32).clone();  // owned (the file may go away)
}

Tensor denormalize_latents(const Tensor& latents0, const LatentStats& stats) {
  Tensor latents = latents0.dtype() == DType::kF32 ? latents0 : latents0.to(DType::kF32);
  VGEN_ASSERT(latents.is_cpu() && latents.ndim() >= 2 && latents.dim(1) == int64_t(stats.mean.size()),
              "denormalize_latents: latents {} for {} channels", latents.str(), stats.mean.size());
  const int64_t B = latents.dim(0), C = latents.dim(1), inner = (B * C) != 0 ? latents.numel() / (B * C) : 0;
  Tensor out = Tensor::empty(latents.shape(), DType::kF32);
  const float* x = latents.f32();
  float* y = out.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      const float inv = 1.0f / stats.std[size_t(c)];  // diffusers: 1.0 / tensor(std) in f32
      const float mean = stats.mean[size_t(c)];
      const int64_t off = (b * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) y[off + i] = x[off + i] / inv + mean;
    }
  return out;
}

}  // namespace vgen
