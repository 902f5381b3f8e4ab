#include "ops/image_resize_aa.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vgen {
namespace {

// One axis's taps: output i reads count[i] inputs from first[i] with weights w[i·kmax ...].
struct AaTaps {
  int64_t kmax = 0;
  std::vector<int64_t> first, count;
  std::vector<float> w;
};

float triangle(float x) {
  x = x < 0 ? -x : x;
  return x < 1.0f ? 1.0f - x : 0.0f;
}

// ATen's _compute_weights_aa for an f32 input: f32 values, with its expressions' double steps
// (the `+ 0.5` literals) kept, so that the tap ranges and weights are the same bits.
AaTaps aa_taps(int64_t in, int64_t out) {
  const float scale = float(in) / float(out);  // area_pixel_compute_scale, align_corners false
  const float support = scale >= 1.0f ? float(1.0 * double(scale)) : 1.0f;  // interp_size 2 · 0.5
  const float invscale = scale >= 1.0f ? float(1.0 / double(scale)) : 1.0f;
  AaTaps t;
  t.kmax = int64_t(std::ceil(support)) * 2 + 1;
  t.first.resize(size_t(out));
  t.count.resize(size_t(out));
  t.w.assign(size_t(out * t.kmax), 0.0f);
  for (int64_t i = 0; i < out; ++i) {
    const float center = float(double(scale) * (double(i) + 0.5));
    const int64_t xmin = std::max<int64_t>(int64_t(double(center - support) + 0.5), 0);
    const int64_t xsize = std::min<int64_t>(int64_t(double(center + support) + 0.5), in) - xmin;
    VGEN_ASSERT(xsize >= 1 && xsize <= t.kmax, "image_resize_bilinear_aa: {} taps (at most {})", xsize, t.kmax);
    float* w = t.w.data() + i * t.kmax;
    float total = 0.0f;
    for (int64_t j = 0; j < xsize; ++j) {
      w[j] = triangle(float((double(float(j + xmin) - center) + 0.5) * double(invscale)));
      total += w[j];
    }
    if (total != 0.0f)
      for (int64_t j = 0; j < xsize; ++j) w[j] /= total;
    t.first[size_t(i)] = xmin;
    t.count[size_t(i)] = xsize;
  }
  return t;
}

// x [C, H, W] resized along the width (axis 2) or the height (axis 1).
Tensor resize_axis(const Tensor& x, int axis, int64_t out) {
  const int64_t C = x.dim(0), H = x.dim(1), W = x.dim(2);
  const int64_t in = axis == 2 ? W : H;
  const AaTaps t = aa_taps(in, out);
  const int64_t oh = axis == 2 ? H : out, ow = axis == 2 ? out : W;
  Tensor y = Tensor::empty({C, oh, ow}, DType::kF32);  // [C, oh, ow]
  const float* src = x.f32();
  float* dst = y.f32();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q) {
        const int64_t i = axis == 2 ? q : r;
        const float* w = t.w.data() + i * t.kmax;
        auto in_at = [&](int64_t k) { return axis == 2 ? src[(c * H + r) * W + k] : src[(c * H + k) * W + q]; };
        // ATen's loop (its AVX2 build contracts the sum into fused multiply-adds).
        float acc = in_at(t.first[size_t(i)]) * w[0];
        for (int64_t j = 1; j < t.count[size_t(i)]; ++j) acc = std::fma(in_at(t.first[size_t(i)] + j), w[j], acc);
        dst[(c * oh + r) * ow + q] = acc;
      }
  return y;
}

}  // namespace

Tensor image_resize_bilinear_aa(const Tensor& image, int64_t out_h, int64_t out_w) {
  VGEN_CHECK(image.ndim() == 3 && image.is_cpu() && image.dtype() == DType::kF32 && out_h >= 1 && out_w >= 1,
             ExitCode::kInternal, "image_resize_bilinear_aa: image {} to {}x{}", image.str(), out_h, out_w);
  Tensor x = image.clone();
  if (out_w != x.dim(2)) x = resize_axis(x, 2, out_w);  // the contiguous axis first, as ATen
  if (out_h != x.dim(1)) x = resize_axis(x, 1, out_h);
  return x;
}

}  // namespace vgen
