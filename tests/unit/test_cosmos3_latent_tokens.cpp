// Cosmos 3's latents ↔ patch tokens (latent_tokens.h): the (c, p, q) input features by hand on
// padded and unpadded latents, ops/embed's patchify and unpatchify (the path of latents that divide
// the patch, on either device) against the host loops exactly, and proj_in's column permutation
// (weights.h) giving diffusers' (p, q, c) projection.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/cosmos3/latent_tokens.h"
#include "model/cosmos3/weights.h"
#include "ops/linear.h"

namespace vgen {
namespace {

Tensor ramp(const Shape& shape, float scale) {
  Tensor t = Tensor::empty(shape, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = scale * float(std::sin(0.37 * double(i) + 0.11));
  return t;
}

void expect_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.numel(), b.numel()) << a.str() << " vs " << b.str();
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.f32()[i], b.f32()[i]) << "element " << i;
}

// Token (t, hp, wp) feature (c·p + i)·p + j is latent (c, t, hp·p + i, wp·p + j), zero past the edge.
void check_by_hand(int64_t C, int64_t T, int64_t H, int64_t W, int p) {
  SCOPED_TRACE(::testing::Message() << "latents " << C << "x" << T << "x" << H << "x" << W << ", patch " << p);
  const Tensor lat = ramp({1, C, T, H, W}, 1.0f);
  const Tensor tok = patch_tokens(lat, p, Device::kCPU, DType::kF32);  // [1, S, C·p·p]
  const int64_t Hp = (H + p - 1) / p, Wp = (W + p - 1) / p, P = C * p * p;
  ASSERT_EQ(tok.shape(), Shape({1, T * Hp * Wp, P}));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t hp = 0; hp < Hp; ++hp)
      for (int64_t wp = 0; wp < Wp; ++wp)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t i = 0; i < p; ++i)
            for (int64_t j = 0; j < p; ++j) {
              const int64_t h = hp * p + i, w = wp * p + j;
              const float want = h < H && w < W ? lat.f32()[((c * T + t) * H + h) * W + w] : 0.0f;
              ASSERT_EQ(tok.f32()[((t * Hp + hp) * Wp + wp) * P + (c * p + i) * p + j], want);
            }
}

TEST(Cosmos3LatentTokens, InputFeaturesInChannelFirstOrder) {
  check_by_hand(4, 2, 4, 6, 2);  // ops/embed patchify
  check_by_hand(4, 2, 3, 5, 2);  // padded: the host loops
  check_by_hand(3, 1, 4, 2, 2);
}

TEST(Cosmos3LatentTokens, EmbedPathMatchesTheHostLoops) {
  const Tensor lat = ramp({1, 4, 2, 4, 6}, 1.0f);
  expect_equal(patch_tokens(lat, 2, Device::kCPU, DType::kF32), latents_to_tokens(lat, 2));
  const int64_t C = 4, T = 2, H = 4, W = 6, S = T * (H / 2) * (W / 2);
  const Tensor tok = ramp({1, S, 4 * C}, 0.5f);  // (p, q, c) order, as proj_out writes
  expect_equal(tokens_to_video(tok, 2, C, T, H, W), tokens_to_latents(tok[0], 2, C, T, H, W, {0, 1}));
}

// proj_in over (c, p, q) tokens with the permuted weight = the checkpoint's weight over diffusers'
// (p, q, c) tokens.
TEST(Cosmos3LatentTokens, PermutedProjInGivesTheCheckpointsProjection) {
  const int64_t C = 3, p = 2, P = C * p * p, D = 5, T = 1, H = 4, W = 4;
  const Tensor lat = ramp({1, C, T, H, W}, 1.0f), w = ramp({D, P}, 0.3f);
  const Tensor ours = linear(patch_tokens(lat, int(p), Device::kCPU, DType::kF32).reshape({4, P}),
                             permute_patch_columns(w, C, p), Tensor());  // [4, D]
  Tensor pqc = Tensor::empty({4, P}, DType::kF32);                       // diffusers' token layout
  for (int64_t hp = 0; hp < 2; ++hp)
    for (int64_t wp = 0; wp < 2; ++wp)
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < p; ++j)
          for (int64_t c = 0; c < C; ++c)
            pqc.f32()[(hp * 2 + wp) * P + (i * p + j) * C + c] = lat.f32()[(c * H + hp * p + i) * W + wp * p + j];
  const Tensor ref = linear(pqc, w, Tensor());
  for (int64_t k = 0; k < ref.numel(); ++k) EXPECT_NEAR(ours.f32()[k], ref.f32()[k], 1e-6) << k;
}

}  // namespace
}  // namespace vgen
