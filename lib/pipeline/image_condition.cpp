#include "pipeline/image_condition.h"

#include <algorithm>
#include <cstring>

namespace vgen {

void check_image_condition(const ImageCondition& cond, const Shape& s) {
  VGEN_ASSERT(s.size() == 5, "latents {} are not [B, C, T, h, w]", shape_str(s));
  if (const Tensor& x = cond.extra_channels; x.defined())
    VGEN_ASSERT(x.ndim() == 5 && x.dim(0) == 1 && x.dim(2) == s[2] && x.dim(3) == s[3] && x.dim(4) == s[4] &&
                    x.dtype() == DType::kF32,
                "extra channels {} do not fit latents {}", x.str(), shape_str(s));
  if (const Tensor& f = cond.fixed_latents; f.defined())
    VGEN_ASSERT(f.ndim() == 5 && f.dim(0) == 1 && f.dim(1) == s[1] && f.dim(2) <= s[2] && f.dim(3) == s[3] &&
                    f.dim(4) == s[4] && f.dtype() == DType::kF32,
                "known frames {} do not fit latents {}", f.str(), shape_str(s));
}

Tensor with_fixed_frames(const Tensor& latents, const ImageCondition& cond) {
  if (!cond.fixed_latents.defined()) return latents;
  check_image_condition(cond, latents.shape());
  Tensor out = latents.clone();  // [B, C, T, h, w]
  const Tensor& f = cond.fixed_latents;  // [1, C, k, h, w]
  const int64_t B = out.dim(0), C = out.dim(1), T = out.dim(2), k = f.dim(2), hw = out.dim(3) * out.dim(4);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      std::memcpy(out.f32() + ((b * C + c) * T) * hw, f.f32() + c * k * hw, size_t(k * hw) * sizeof(float));
  return out;
}

Tensor condition_model_input(const Tensor& latents, const ImageCondition& cond) {
  Tensor x = with_fixed_frames(latents, cond);
  if (!cond.extra_channels.defined()) return x;
  check_image_condition(cond, latents.shape());
  const Tensor& e = cond.extra_channels;  // [1, C_x, T, h, w]
  const int64_t B = x.dim(0), C = x.dim(1), Cx = e.dim(1);
  const int64_t per = x.numel() / (B * C);  // T·h·w per channel
  Tensor out = Tensor::empty({B, C + Cx, x.dim(2), x.dim(3), x.dim(4)}, DType::kF32);  // [B, C + C_x, T, h, w]
  for (int64_t b = 0; b < B; ++b) {
    float* o = out.f32() + b * (C + Cx) * per;
    std::memcpy(o, x.f32() + b * C * per, size_t(C * per) * sizeof(float));
    std::memcpy(o + C * per, e.f32(), size_t(Cx * per) * sizeof(float));
  }
  return out;
}

Tensor condition_token_timesteps(const ImageCondition& cond, double t, int64_t batch, int64_t num_tokens,
                                 int64_t latent_frames) {
  if (!cond.fixed_latents.defined()) return Tensor();
  const int64_t k = cond.fixed_latents.dim(2);
  VGEN_ASSERT(latent_frames > 0 && num_tokens % latent_frames == 0 && k <= latent_frames,
              "{} tokens over {} latent frames ({} known)", num_tokens, latent_frames, k);
  const int64_t known = num_tokens / latent_frames * k;  // frame-major tokens, one token frame per latent frame
  Tensor ts = Tensor::empty({batch, num_tokens}, DType::kF32);  // [B, S]
  for (int64_t b = 0; b < batch; ++b) {
    float* row = ts.f32() + b * num_tokens;
    std::fill(row, row + known, 0.0f);
    std::fill(row + known, row + num_tokens, float(t));
  }
  return ts;
}

}  // namespace vgen
