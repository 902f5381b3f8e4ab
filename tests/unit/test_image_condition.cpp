// The image condition in the denoising loop (pipeline/image_condition.h) and the Wan I2V mask
// (model/wan/image_condition.h) against diffusers' construction written out literally.
#include <gtest/gtest.h>

#include <vector>

#include "model/wan/image_condition.h"
#include "pipeline/image_condition.h"

namespace vgen {
namespace {

Tensor iota(const Shape& s, float base) {
  Tensor t = Tensor::empty(s, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = base + float(i);
  return t;
}

// diffusers WanImageToVideoPipeline.prepare_latents: ones over the F pixel frames, zeros on the
// frames between the given ones, the first frame repeated scale_temporal times, viewed as
// [T, st] slots and transposed to [st, T].
std::vector<float> diffusers_mask(int64_t T, int64_t st, bool last) {
  const int64_t F = (T - 1) * st + 1;
  std::vector<float> frames(size_t(F), 0.0f);
  frames[0] = 1.0f;
  if (last) frames[size_t(F - 1)] = 1.0f;
  std::vector<float> slots(size_t(st), frames[0]);  // the first frame repeated
  slots.insert(slots.end(), frames.begin() + 1, frames.end());
  std::vector<float> out(size_t(st * T));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < st; ++j) out[size_t(j * T + t)] = slots[size_t(t * st + j)];  // [st, T]
  return out;
}

TEST(ImageCondition, WanMaskMatchesDiffusers) {
  for (bool last : {false, true})
    for (int64_t T : {1, 2, 3, 21}) {
      if (last && T < 2) continue;
      const int64_t h = 2, w = 3, st = 4;
      Tensor m = wan_i2v_mask({1, 16, T, h, w}, int(st), last);  // [1, st, T, h, w]
      ASSERT_EQ(m.shape(), (Shape{1, st, T, h, w}));
      const std::vector<float> want = diffusers_mask(T, st, last);
      for (int64_t j = 0; j < st; ++j)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t p = 0; p < h * w; ++p)
            ASSERT_EQ(m.f32()[(j * T + t) * h * w + p], want[size_t(j * T + t)]) << "T " << T << " last " << last;
    }
}

TEST(ImageCondition, ModelInputAppendsExtraChannelsPerBatchItem) {
  ImageCondition c;
  c.extra_channels = iota({1, 3, 2, 2, 2}, 1000.0f);  // [1, C_x, T, h, w]
  Tensor lat = iota({2, 4, 2, 2, 2}, 0.0f);           // [B, C, T, h, w]
  Tensor in = condition_model_input(lat, c);
  ASSERT_EQ(in.shape(), (Shape{2, 7, 2, 2, 2}));
  const int64_t per = 8;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t ch = 0; ch < 7; ++ch)
      for (int64_t i = 0; i < per; ++i) {
        const float want = ch < 4 ? lat.f32()[(b * 4 + ch) * per + i] : c.extra_channels.f32()[(ch - 4) * per + i];
        ASSERT_EQ(in.f32()[(b * 7 + ch) * per + i], want);
      }
  EXPECT_THROW(condition_model_input(iota({1, 4, 3, 2, 2}, 0), c), Error);  // 3 frames against 2
}

TEST(ImageCondition, FixedFramesReplaceTheFirstFramesOnly) {
  ImageCondition c;
  c.fixed_latents = iota({1, 2, 1, 2, 2}, -50.0f);  // [1, C, k = 1, h, w]
  Tensor lat = iota({1, 2, 3, 2, 2}, 0.0f);
  Tensor out = with_fixed_frames(lat, c);
  for (int64_t ch = 0; ch < 2; ++ch)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t p = 0; p < 4; ++p) {
        const int64_t i = (ch * 3 + t) * 4 + p;
        ASSERT_EQ(out.f32()[i], t == 0 ? c.fixed_latents.f32()[ch * 4 + p] : lat.f32()[i]);
      }
  EXPECT_EQ(lat.f32()[0], 0.0f);  // the input is not changed
  EXPECT_EQ(condition_model_input(lat, c).shape(), lat.shape());
}

TEST(ImageCondition, KnownFramesRunAtTimestepZero) {
  ImageCondition c;
  c.fixed_latents = Tensor::zeros({1, 48, 1, 4, 6}, DType::kF32);
  // 3 latent frames of 2 × 3 tokens (patch 1 × 2 × 2): the first 6 tokens at 0.
  Tensor ts = condition_token_timesteps(c, 937.5, 2, 18, 3);
  ASSERT_EQ(ts.shape(), (Shape{2, 18}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 18; ++s) ASSERT_EQ(ts.f32()[b * 18 + s], s < 6 ? 0.0f : 937.5f);
  EXPECT_FALSE(condition_token_timesteps(ImageCondition(), 1.0, 1, 18, 3).defined());
}

}  // namespace
}  // namespace vgen

#include <cstring>

#include "core/random.h"
#include "model/wan/dit/transformer.h"

namespace vgen {
namespace {

// Both CFG streams prepare their conditioning from the same image tokens: preparing must not change
// them (FLF2V adds its position embedding to a copy), so the second stream's K/V equal the first's.
TEST(ImageCondition, PreparingTheImageTokensLeavesThemUnchanged) {
  auto dit = WanTransformer::load(std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan21-flf2v-tiny/transformer");
  const Tensor text = randn({1, 16, dit->config().text_dim}, 1);        // [1, L, text_dim]
  const Tensor tokens = randn({2, 17, *dit->config().image_dim}, 2);    // [2 images, 17, image_dim]
  const Tensor before = tokens.clone();
  const TextContext a = dit->prepare_text(text, tokens);
  const TextContext b = dit->prepare_text(text, tokens);
  ASSERT_EQ(std::memcmp(tokens.raw(), before.raw(), tokens.nbytes()), 0) << "the caller's image tokens changed";
  ASSERT_EQ(a.k.size(), b.k.size());
  for (size_t i = 0; i < a.k.size(); ++i) {
    EXPECT_EQ(std::memcmp(a.k[i].raw(), b.k[i].raw(), a.k[i].nbytes()), 0) << "block " << i;
    EXPECT_EQ(std::memcmp(a.v[i].raw(), b.v[i].raw(), a.v[i].nbytes()), 0) << "block " << i;
  }
}

}  // namespace
}  // namespace vgen
