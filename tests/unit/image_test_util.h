// Shared by the image tests: the test images of tests/images (made with Pillow and transformers by
// make_images.py) and a comparison that reports the largest difference.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/json.h"
#include "core/tensor.h"
#include "io/image_reader.h"
#include "io/safetensors.h"

// Tests that decode files skip in a build without image decoding (VGEN_IMAGES=OFF).
#define VGEN_SKIP_WITHOUT_DECODERS()                                              \
  do {                                                                            \
    if (!::vgen::image_decoding_supported()) GTEST_SKIP() << "built with VGEN_IMAGES=OFF"; \
  } while (0)

namespace vgen::test {

inline std::string images_dir() { return std::string(VGEN_SOURCE_DIR) + "/tests/images"; }
inline std::string golden_i2v_dir() { return std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v"; }

inline const WeightStore& expected_images() {
  static const WeightStore ws = WeightStore::open(images_dir() + "/expected.safetensors");
  return ws;
}

inline const Json& image_cases() {
  static const Json j = read_json_file(images_dir() + "/cases.json", ExitCode::kInput);
  return j;
}

// Largest |a - b| over two tensors of one shape (any dtype the host converts to f32); infinity
// when the shapes differ.
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  Tensor fa = a.to(DType::kF32), fb = b.to(DType::kF32);
  double m = 0;
  for (int64_t i = 0; i < fa.numel(); ++i) m = std::max(m, double(std::fabs(fa.f32()[i] - fb.f32()[i])));
  return m;
}

}  // namespace vgen::test
