// Pillow-exact resampling (ops/image_resize.h): 24 resizes of tests/images (every filter, up and
// down, 1-pixel edges, both pass orders, one size kept) equal Pillow's Image.resize.
#include <gtest/gtest.h>

#include <numeric>

#include "image_test_util.h"
#include "ops/image_resize.h"

using namespace vgen;

TEST(ImageResize, EqualsPillowOnEveryCase) {
  const Json& cases = test::image_cases()["resize"];
  ASSERT_GE(cases.size(), 20u);
  double worst = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& c = cases[i];
    const Tensor in = test::expected_images().get(fmt::format("resize_{}_in", i));
    const Tensor want = test::expected_images().get(fmt::format("resize_{}_out", i));
    const ResampleFilter f = resample_filter_from_name(c["filter"].get<std::string>(), "test");
    const Tensor got = image_resize(in, c["height"].get<int64_t>(), c["width"].get<int64_t>(), f);
    const double d = test::max_abs_diff(got, want);
    EXPECT_EQ(d, 0.0) << "case " << i << ": " << in.str() << " -> " << want.str() << " " << resample_filter_name(f);
    worst = std::max(worst, d);
  }
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST(ImageResize, TapsSumToOneInFixedPoint) {
  for (ResampleFilter f : {ResampleFilter::kLanczos, ResampleFilter::kBicubic, ResampleFilter::kBilinear,
                           ResampleFilter::kBox, ResampleFilter::kHamming}) {
    for (auto [in, out] : {std::pair{53, 48}, {30, 15}, {16, 64}, {1, 5}, {1280, 832}}) {
      ResampleTaps t = resample_taps(in, out, f);
      for (int i = 0; i < out; ++i) {
        const int32_t* k = &t.coeffs[size_t(i) * size_t(t.ksize)];
        const int64_t sum = std::accumulate(k, k + t.count[size_t(i)], int64_t(0));
        EXPECT_NEAR(double(sum), double(1 << 22), double(t.count[size_t(i)])) << resample_filter_name(f);
        EXPECT_GE(t.first[size_t(i)], 0);
        EXPECT_LE(t.first[size_t(i)] + t.count[size_t(i)], in);
      }
    }
  }
}

TEST(ImageResize, SameSizeIsACopyAndFiltersHaveNames) {
  Tensor img = Tensor::zeros({3, 4, 3}, DType::kU8);
  img.data<uint8_t>()[5] = 77;
  Tensor out = image_resize(img, 3, 4, ResampleFilter::kLanczos);
  EXPECT_EQ(test::max_abs_diff(out, img), 0.0);
  EXPECT_NE(out.raw(), img.raw());
  EXPECT_EQ(resample_filter_from_name("bicubic", "t"), ResampleFilter::kBicubic);
  EXPECT_EQ(resample_filter_from_pil(1, "t"), ResampleFilter::kLanczos);
  EXPECT_THROW(resample_filter_from_name("nearest", "t"), Error);
  EXPECT_THROW(resample_filter_from_pil(0, "t"), Error);
  EXPECT_THROW(image_resize(img, 0, 4, ResampleFilter::kBox), Error);
}
