// Cosmos 3's mRoPE by hand (the fixtures cover the checkpoints' settings): the position ids with fps
// modulation off and without the spatial reset, the interleaved frequency layout of the angles, and
// the rope_ tables' pair layout.
#include <gtest/gtest.h>

#include <cmath>

#include "model/cosmos3/mrope.h"

namespace vgen {
namespace {

Cosmos3Config small() {
  Cosmos3Config c;
  c.head_dim = 16;  // 8 frequencies: t 0, 3, 6, 7; h 1, 4; w 2, 5
  c.rope_axes_dim = {4, 2, 2};
  c.temporal_margin = 100;
  c.base_fps = 24;
  return c;
}

float at(const Tensor& ids, int axis, int64_t n) { return ids.f32()[axis * ids.dim(1) + n]; }

TEST(Cosmos3Mrope, IdsWithoutFpsModulationOrSpatialReset) {
  Cosmos3Config c = small();
  c.enable_fps_modulation = false;
  c.reset_spatial_ids = false;
  const Tensor ids = mrope_position_ids(c, 3, {2, 1, 2}, 12.0, 4);  // [3, 3 + 4]
  ASSERT_EQ(ids.shape(), Shape({3, 7}));
  for (int a = 0; a < 3; ++a)
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(at(ids, a, i), float(i));
  // Grid token (t, h, w) = (1, 0, 1) is the last: t = 1 + 103, h = 0 + 103, w = 1 + 103.
  EXPECT_EQ(at(ids, 0, 6), 104.0f);
  EXPECT_EQ(at(ids, 1, 6), 103.0f);
  EXPECT_EQ(at(ids, 2, 6), 104.0f);
}

TEST(Cosmos3Mrope, FpsScalesTheTimeAxisOfVideosOnly) {
  const Cosmos3Config c = small();
  // fps 12 against base 24: latent frame t sits at 2·t after the offset (3 + 100).
  const Tensor video = mrope_position_ids(c, 3, {3, 1, 1}, 12.0, 4);
  EXPECT_EQ(at(video, 0, 3), 103.0f);
  EXPECT_EQ(at(video, 0, 4), 105.0f);
  EXPECT_EQ(at(video, 0, 5), 107.0f);
  EXPECT_EQ(at(video, 1, 5), 0.0f);  // h and w from 0
  // One frame: integer positions whatever the fps; no fps: integer positions too.
  EXPECT_EQ(at(mrope_position_ids(c, 3, {1, 1, 1}, 12.0, 4), 0, 3), 103.0f);
  EXPECT_EQ(at(mrope_position_ids(c, 3, {3, 1, 1}, std::nullopt, 4), 0, 5), 105.0f);
  EXPECT_EQ(mrope_text_position_ids(4).shape(), Shape({3, 4}));
}

TEST(Cosmos3Mrope, InterleavedAnglesAndPairTables) {
  const Cosmos3Config c = small();
  Tensor ids = Tensor::from_vector({5, 7, 11}, {3, 1});  // one token: t 5, h 7, w 11
  const Tensor ang = mrope_angles(c, ids);               // [1, 8]
  const std::vector<float> inv = mrope_inv_freq(c);
  const int axis_of[8] = {0, 1, 2, 0, 1, 2, 0, 0};
  const float pos[3] = {5, 7, 11};
  for (int j = 0; j < 8; ++j) EXPECT_EQ(ang.f32()[j], pos[axis_of[j]] * inv[size_t(j)]) << "frequency " << j;
  EXPECT_EQ(inv[0], 1.0f);
  const MropeTables t = mrope_tables(ang, Device::kCPU);  // [1, 16]
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(t.cos.f32()[2 * j], t.cos.f32()[2 * j + 1]);
    EXPECT_EQ(t.sin.f32()[2 * j + 1], float(std::sin(double(ang.f32()[j]))));
  }
}

}  // namespace
}  // namespace vgen
