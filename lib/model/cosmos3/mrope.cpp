#include "model/cosmos3/mrope.h"

#include <cmath>

namespace vgen {

Tensor mrope_position_ids(const Cosmos3Config& cfg, int64_t prompt_len, const std::array<int64_t, 3>& grid,
                          std::optional<double> fps, int temporal_compression) {
  const auto [gt, gh, gw] = grid;
  VGEN_ASSERT(prompt_len >= 0 && gt >= 1 && gh >= 1 && gw >= 1 && temporal_compression >= 1,
              "mrope_position_ids: prompt {} grid {}x{}x{} compression {}", prompt_len, gt, gh, gw,
              temporal_compression);
  const int64_t N = prompt_len + gt * gh * gw;
  Tensor ids = Tensor::empty({3, N}, DType::kF32);  // [3, N]
  float* p = ids.f32();
  for (int64_t i = 0; i < prompt_len; ++i)
    for (int a = 0; a < 3; ++a) p[a * N + i] = float(i);
  const int64_t offset = prompt_len + cfg.temporal_margin;
  const bool scaled = cfg.enable_fps_modulation && fps.has_value() && gt > 1;
  // diffusers: (frame / tps) · base_tps + offset, each operation in fp32 (tps and base_tps Python floats).
  const float tps = scaled ? float(*fps / double(temporal_compression)) : 1.0f;
  const float base_tps = float(double(cfg.base_fps) / double(temporal_compression));
  const int64_t spatial_offset = cfg.reset_spatial_ids ? 0 : offset;
  int64_t n = prompt_len;
  for (int64_t t = 0; t < gt; ++t) {
    const float tv = scaled ? float(t) / tps * base_tps + float(offset) : float(t + offset);
    for (int64_t h = 0; h < gh; ++h)
      for (int64_t w = 0; w < gw; ++w, ++n) {
        p[n] = tv;
        p[N + n] = float(h + spatial_offset);
        p[2 * N + n] = float(w + spatial_offset);
      }
  }
  return ids;
}

Tensor mrope_text_position_ids(int64_t prompt_len) {
  VGEN_ASSERT(prompt_len >= 0, "mrope_text_position_ids: {}", prompt_len);
  Tensor ids = Tensor::empty({3, prompt_len}, DType::kF32);  // [3, L]
  for (int a = 0; a < 3; ++a)
    for (int64_t i = 0; i < prompt_len; ++i) ids.f32()[a * prompt_len + i] = float(i);
  return ids;
}

std::vector<float> mrope_inv_freq(const Cosmos3Config& cfg) {
  const int half = cfg.head_dim / 2;
  std::vector<float> inv(size_t(half), 0.f);
  for (int j = 0; j < half; ++j) {
    const float e = float(2 * j) / float(cfg.head_dim);
    inv[size_t(j)] = 1.0f / std::pow(float(cfg.rope_theta), e);
  }
  return inv;
}

Tensor mrope_angles(const Cosmos3Config& cfg, const Tensor& ids) {
  VGEN_ASSERT(ids.is_cpu() && ids.dtype() == DType::kF32 && ids.ndim() == 2 && ids.dim(0) == 3,
              "mrope_angles: ids {}", ids.str());
  const int64_t N = ids.dim(1), half = cfg.head_dim / 2;
  const std::vector<float> inv = mrope_inv_freq(cfg);
  const auto& axes = cfg.rope_axes_dim;
  Tensor ang = Tensor::empty({N, half}, DType::kF32);  // [N, Dh/2]
  const float* p = ids.f32();
  float* a = ang.f32();
  for (int64_t j = 0; j < half; ++j) {
    int axis = 0;
    if (j % 3 == 1 && j < 3 * axes[1]) axis = 1;
    if (j % 3 == 2 && j < 3 * axes[2]) axis = 2;
    for (int64_t n = 0; n < N; ++n) a[n * half + j] = p[axis * N + n] * inv[size_t(j)];
  }
  return ang;
}

MropeTables mrope_tables(const Tensor& angles, Device device) {
  VGEN_ASSERT(angles.is_cpu() && angles.dtype() == DType::kF32 && angles.ndim() == 2, "mrope_tables: angles {}",
              angles.str());
  const int64_t N = angles.dim(0), half = angles.dim(1);
  Tensor c = Tensor::empty({N, 2 * half}, DType::kF32);  // [N, Dh]
  Tensor s = Tensor::empty({N, 2 * half}, DType::kF32);  // [N, Dh]
  const float* a = angles.f32();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < half; ++j) {
      const float cv = float(std::cos(double(a[n * half + j]))), sv = float(std::sin(double(a[n * half + j])));
      c.f32()[n * 2 * half + 2 * j] = c.f32()[n * 2 * half + 2 * j + 1] = cv;
      s.f32()[n * 2 * half + 2 * j] = s.f32()[n * 2 * half + 2 * j + 1] = sv;
    }
  return {c.to(device), s.to(device)};
}

}  // namespace vgen
