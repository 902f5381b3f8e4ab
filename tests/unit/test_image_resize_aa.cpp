// ops/image_resize_aa (torch's bilinear antialiased interpolate) against torch on a small seeded
// image, down and up (test_image_resize_aa_cases.h, make_image_resize_aa_cases.py), and Cosmos 3's
// image preprocessing (resize to cover, centre crop, 8-bit rounding) against the pipeline_i2v case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "image_test_util.h"
#include "model/cosmos3/image_condition.h"
#include "ops/image_resize_aa.h"
#include "test_image_resize_aa_cases.h"

namespace vgen {
namespace {

TEST(ImageResizeAa, MatchesTorch) {
  using namespace aa_cases;
  Tensor in = Tensor::empty({kC, kH, kW}, DType::kF32);  // [C, H, W]
  for (size_t i = 0; i < kInput.size(); ++i) in.f32()[i] = kInput[i];
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::to_string(c.out_h) + "x" + std::to_string(c.out_w));
    const Tensor out = image_resize_bilinear_aa(in, c.out_h, c.out_w);
    ASSERT_EQ(out.shape(), Shape({kC, c.out_h, c.out_w}));
    double m = 0;
    for (size_t i = 0; i < c.out.size(); ++i) m = std::max(m, std::fabs(double(out.f32()[i]) - double(c.out[i])));
    std::printf("  %dx%d max-abs %.3e\n", c.out_h, c.out_w, m);
    EXPECT_LE(m, 1e-4);  // f32 sums of at most a few taps over values up to 255
  }
}

TEST(ImageResizeAa, SameSizeIsACopy) {
  Tensor in = Tensor::empty({1, 2, 3}, DType::kF32);
  for (int i = 0; i < 6; ++i) in.f32()[i] = float(i * 40);
  const Tensor out = image_resize_bilinear_aa(in, 2, 3);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out.f32()[i], in.f32()[i]);
  EXPECT_NE(out.raw(), in.raw());
}

// The pipeline's _preprocess_conditioning_image of images/i2v_first.png (56×40 → cover 48×35 →
// crop 32×48), within one 8-bit level (the golden image_resize rule), and the pixels off by one counted.
TEST(Cosmos3ImagePreprocess, MatchesPipelineCase) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const std::string root = std::string(VGEN_SOURCE_DIR) + "/tests/golden-cosmos3";
  const Tensor rgb = read_image(root + "/images/i2v_first.png");
  const WeightStore ws = WeightStore::open(root + "/cases/pipeline_i2v.safetensors");
  const Tensor ref = ws.get_f32("image_preprocessed");  // [1, 3, 32, 48]
  const Tensor got = cosmos3_preprocess_image(rgb, int(ref.dim(2)), int(ref.dim(3)));
  ASSERT_EQ(got.shape(), ref.shape());
  int64_t off = 0;
  double m = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double d = std::fabs(double(got.f32()[i]) - double(ref.f32()[i]));
    m = std::max(m, d);
    off += d > 1e-6;
  }
  std::printf("  max-abs %.3e, %lld of %lld values off by a level\n", m, (long long)off, (long long)ref.numel());
  EXPECT_LE(m, 2.0 / 255.0 + 1e-6);
}

}  // namespace
}  // namespace vgen
