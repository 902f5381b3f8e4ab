// The vae_decode golden case on one rank (hand-made single-rank Mesh), plus decoder properties:
// streaming chunks, batch items and to_frames01.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "dist/mesh.h"
#include "dit_test_util.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/family.h"
#include "tools/golden.h"

using namespace vgen;

namespace {
const std::string kFixtures = test::golden_dir();
}  // namespace

TEST(GoldenVae, VaeDecodeCasePasses) {
  Recipe recipe;
  Mesh mesh = test::single_rank_mesh();
  EXPECT_EQ(run_golden(kFixtures, recipe, mesh, "vae_decode"), 0);
}

TEST(GoldenVae, BatchOfTwoDecodesEachItem) {
  WanVaeDecoder dec = WanVaeDecoder::load(kFixtures + "/wan21-tiny/vae");
  std::mt19937 g(5);
  std::normal_distribution<float> d;
  const Shape s1 = {1, 16, 2, 3, 5};
  std::vector<float> a(size_t(shape_numel(s1))), b(a.size());
  for (auto& x : a) x = d(g);
  for (auto& x : b) x = d(g);
  std::vector<float> ab(a);
  ab.insert(ab.end(), b.begin(), b.end());
  Tensor va = dec.decode(Tensor::from_vector(a, s1));
  Tensor vb = dec.decode(Tensor::from_vector(b, s1));
  Tensor vab = dec.decode(Tensor::from_vector(ab, {2, 16, 2, 3, 5}));
  ASSERT_EQ(va.shape(), (Shape{1, 3, 5, 24, 40}));
  ASSERT_EQ(vab.shape(), (Shape{2, 3, 5, 24, 40}));
  for (int64_t i = 0; i < va.numel(); ++i) {
    ASSERT_EQ(vab.f32()[i], va.f32()[i]);
    ASSERT_EQ(vab.f32()[va.numel() + i], vb.f32()[i]);
    ASSERT_LE(std::fabs(va.f32()[i]), 1.0f);
  }
  Tensor fr = to_frames01(va);  // [F, H, W, 3]
  ASSERT_EQ(fr.shape(), (Shape{5, 24, 40, 3}));
  const int64_t plane = 24 * 40;
  // Pixel (f=2, y=3, x=7), channel 1.
  const float v = va.f32()[(1 * 5 + 2) * plane + 3 * 40 + 7];
  EXPECT_FLOAT_EQ(fr.f32()[((2 * 24 + 3) * 40 + 7) * 3 + 1], std::clamp(v * 0.5f + 0.5f, 0.f, 1.f));
}

TEST(GoldenVae, WrongLatentChannelsIsAnInputError) {
  WanVaeDecoder dec = WanVaeDecoder::load(kFixtures + "/wan21-tiny/vae");
  try {
    dec.decode(Tensor::zeros({1, 15, 1, 2, 2}, DType::kF32));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput);
  }
}
