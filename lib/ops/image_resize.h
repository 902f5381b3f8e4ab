// Resampling of 8-bit RGB images as Pillow (13.0) Image.resize does it (docs/images.md "Resizing"):
// a separable convolution whose support grows with the downscale factor, fixed-point taps (22
// fraction bits, rounded half away from zero), one pass per changed dimension into a uint8 image,
// each rounding half up and clamping to [0, 255]; the horizontal pass first unless the height
// shrinks by more than twice what the width shrinks. Host only: an input image is resized once
// per video, before anything runs on the device.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace vgen {

// Pillow's convolution filters; the values are Pillow's Resampling numbers (NEAREST, 0, is not a
// convolution and is not offered).
enum class ResampleFilter : int { kLanczos = 1, kBilinear = 2, kBicubic = 3, kBox = 4, kHamming = 5 };

const char* resample_filter_name(ResampleFilter f);
// "lanczos", "bicubic", "bilinear", "box", "hamming"; throws kInput naming `what` otherwise.
ResampleFilter resample_filter_from_name(const std::string& name, const std::string& what);
// Pillow's Resampling number (a `resample` key of a processor config); throws kModel naming `what`.
ResampleFilter resample_filter_from_pil(int64_t code, const std::string& what);

// The taps of one 1-D pass from `in_size` to `out_size` samples: output i reads `count[i]` inputs
// from `first[i]` with the 22-bit coefficients coeffs[i * ksize ...].
struct ResampleTaps {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> coeffs;
};
ResampleTaps resample_taps(int in_size, int out_size, ResampleFilter filter);

// rgb: CPU u8 [H, W, 3] → u8 [out_h, out_w, 3]. The same size returns a copy.
Tensor image_resize(const Tensor& rgb, int64_t out_h, int64_t out_w, ResampleFilter filter);

}  // namespace vgen
