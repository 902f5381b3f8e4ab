// torch.nn.functional.interpolate(mode="bilinear", align_corners=False, antialias=True) on a host f32
// image (ATen's separable anti-aliased kernel, UpSampleKernel.cpp): per axis, output i reads the
// inputs around center = scale·(i + 0.5) (scale = in/out) within support max(scale, 1), weighted by
// the triangle filter at (j − center + 0.5)/max(scale, 1) and normalised; f32 weights and sums, the
// width pass first, no rounding between the passes. Not Pillow's resize (ops/image_resize.h), which
// rounds to 8 bits after each pass.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// image: host f32 [C, H, W] → [C, out_h, out_w].
Tensor image_resize_bilinear_aa(const Tensor& image, int64_t out_h, int64_t out_w);

}  // namespace vgen
