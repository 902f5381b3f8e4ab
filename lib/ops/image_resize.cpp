#include "ops/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vgen {

namespace {

// The arithmetic below is Pillow's, operation for operation in double precision, so that every
// tap rounds to the same 22-bit integer (docs/images.md "Resizing"); this file is compiled
// without floating-point contraction (lib/CMakeLists.txt) so that no FMA changes a rounding.
constexpr int kPrecisionBits = 32 - 8 - 2;  // 8-bit samples, two bits of headroom for over/undershoot
constexpr double kPi = 3.14159265358979323846;

double box_filter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }

double bilinear_filter(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

double hamming_filter(double x) {
  if (x < 0.0) x = -x;
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x = x * kPi;
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x));  // float constants, as Pillow has them
}

double bicubic_filter(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * kPi;
  return std::sin(x) / x;
}

double lanczos_filter(double x) { return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3) : 0.0; }

struct FilterDef {
  double (*fn)(double);
  double support;
};

FilterDef filter_def(ResampleFilter f) {
  switch (f) {
    case ResampleFilter::kBox: return {box_filter, 0.5};
    case ResampleFilter::kBilinear: return {bilinear_filter, 1.0};
    case ResampleFilter::kHamming: return {hamming_filter, 1.0};
    case ResampleFilter::kBicubic: return {bicubic_filter, 2.0};
    case ResampleFilter::kLanczos: return {lanczos_filter, 3.0};
  }
  VGEN_ASSERT(false, "unknown resample filter {}", int(f));
}

// Sum of 22-bit products with the rounding offset, back to 8 bits: floor, then clamp.
inline uint8_t clip8(int64_t acc) {
  int64_t v = acc >> kPrecisionBits;
  return uint8_t(std::clamp<int64_t>(v, 0, 255));
}

// One horizontal pass: rows [row0, row0 + out.rows) of `in` (w_in wide) → out (taps.first.size() wide).
void resample_rows(const uint8_t* in, int64_t w_in, int64_t row0, uint8_t* out, int64_t rows,
                   const ResampleTaps& t) {
  const int64_t w_out = int64_t(t.first.size());
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < rows; ++y) {
    const uint8_t* src = in + (row0 + y) * w_in * 3;
    uint8_t* dst = out + y * w_out * 3;
    for (int64_t x = 0; x < w_out; ++x) {
      const int32_t* k = &t.coeffs[size_t(x) * t.ksize];
      const uint8_t* s = src + int64_t(t.first[x]) * 3;
      int64_t a0 = 1 << (kPrecisionBits - 1), a1 = a0, a2 = a0;
      for (int i = 0; i < t.count[x]; ++i) {
        a0 += int64_t(s[3 * i + 0]) * k[i];
        a1 += int64_t(s[3 * i + 1]) * k[i];
        a2 += int64_t(s[3 * i + 2]) * k[i];
      }
      dst[3 * x + 0] = clip8(a0);
      dst[3 * x + 1] = clip8(a1);
      dst[3 * x + 2] = clip8(a2);
    }
  }
}

// One vertical pass: `in` (w wide) → out (taps.first.size() rows); tap rows are offset by `row0`
// (the first input row that `in` holds).
void resample_cols(const uint8_t* in, int64_t w, int64_t row0, uint8_t* out, const ResampleTaps& t) {
  const int64_t h_out = int64_t(t.first.size());
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < h_out; ++y) {
    const int32_t* k = &t.coeffs[size_t(y) * t.ksize];
    const uint8_t* src = in + (int64_t(t.first[y]) - row0) * w * 3;
    uint8_t* dst = out + y * w * 3;
    for (int64_t x = 0; x < w * 3; ++x) {
      int64_t acc = 1 << (kPrecisionBits - 1);
      for (int i = 0; i < t.count[y]; ++i) acc += int64_t(src[i * w * 3 + x]) * k[i];
      dst[x] = clip8(acc);
    }
  }
}

// Pillow's two-pass resize (docs/images.md "Resizing"): one pass per changed dimension, the
// horizontal one first (on the rows the vertical pass reads) unless the height shrinks by more
// than twice what the width shrinks, then the vertical one first. The order changes the result
// (each pass rounds to 8 bits).
Tensor resample_2d(const Tensor& rgb, int64_t out_h, int64_t out_w, ResampleFilter f) {
  const int64_t h = rgb.dim(0), w = rgb.dim(1);
  const bool horizontal = out_w != w, vertical = out_h != h;
  const bool vertical_first = h - out_h > 0 && h - out_h > (w - out_w) * 2;
  Tensor cur = rgb;
  if (vertical_first) {
    Tensor tmp = Tensor::empty({out_h, w, 3}, DType::kU8);
    resample_cols(rgb.data<uint8_t>(), w, 0, tmp.data<uint8_t>(), resample_taps(int(h), int(out_h), f));
    cur = tmp;
    if (horizontal) {
      Tensor out = Tensor::empty({out_h, out_w, 3}, DType::kU8);
      resample_rows(cur.data<uint8_t>(), w, 0, out.data<uint8_t>(), out_h, resample_taps(int(w), int(out_w), f));
      cur = out;
    }
    return cur;
  }
  ResampleTaps tv;
  int64_t row0 = 0, rows = h;
  if (vertical) {
    tv = resample_taps(int(h), int(out_h), f);
    row0 = tv.first.front();
    rows = int64_t(tv.first.back()) + tv.count.back() - row0;
  }
  if (horizontal) {
    Tensor tmp = Tensor::empty({rows, out_w, 3}, DType::kU8);
    resample_rows(rgb.data<uint8_t>(), w, row0, tmp.data<uint8_t>(), rows, resample_taps(int(w), int(out_w), f));
    cur = tmp;
  } else {
    row0 = 0;  // the vertical pass reads the input itself
  }
  if (!vertical) return cur;
  Tensor out = Tensor::empty({out_h, out_w, 3}, DType::kU8);
  resample_cols(cur.data<uint8_t>(), out_w, row0, out.data<uint8_t>(), tv);
  return out;
}

}  // namespace

const char* resample_filter_name(ResampleFilter f) {
  switch (f) {
    case ResampleFilter::kBox: return "box";
    case ResampleFilter::kBilinear: return "bilinear";
    case ResampleFilter::kHamming: return "hamming";
    case ResampleFilter::kBicubic: return "bicubic";
    case ResampleFilter::kLanczos: return "lanczos";
  }
  return "?";
}

ResampleFilter resample_filter_from_name(const std::string& name, const std::string& what) {
  for (ResampleFilter f : {ResampleFilter::kLanczos, ResampleFilter::kBicubic, ResampleFilter::kBilinear,
                           ResampleFilter::kBox, ResampleFilter::kHamming})
    if (name == resample_filter_name(f)) return f;
  VGEN_THROW(ExitCode::kInput, "{}: unknown resampling filter '{}' (lanczos, bicubic, bilinear, box or hamming)",
             what, name);
}

ResampleFilter resample_filter_from_pil(int64_t code, const std::string& what) {
  VGEN_CHECK(code >= 1 && code <= 5, ExitCode::kModel,
             "{}: resample {} is not supported (1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming; "
             "0 nearest is not a convolution)",
             what, code);
  return ResampleFilter(int(code));
}

ResampleTaps resample_taps(int in_size, int out_size, ResampleFilter filter) {
  VGEN_ASSERT(in_size > 0 && out_size > 0, "resample {} -> {}", in_size, out_size);
  const FilterDef fd = filter_def(filter);
  // Pillow's box is (0, 0, in_w, in_h) in single precision: exact for every size we accept.
  const double scale = double(float(in_size) - 0.0f) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = fd.support * filterscale;
  ResampleTaps t;
  t.ksize = int(std::ceil(support)) * 2 + 1;
  t.first.resize(size_t(out_size));
  t.count.resize(size_t(out_size));
  t.coeffs.assign(size_t(out_size) * size_t(t.ksize), 0);
  const double inv_filterscale = 1.0 / filterscale;
  std::vector<double> w(size_t(t.ksize));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = 0.0f + (xx + 0.5) * scale;
    const int xmin = std::max(0, int(center - support + 0.5));
    const int xmax = std::min(in_size, int(center + support + 0.5)) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[size_t(x)] = fd.fn((x + xmin - center + 0.5) * inv_filterscale);
      ww += w[size_t(x)];
    }
    int32_t* k = &t.coeffs[size_t(xx) * size_t(t.ksize)];
    for (int x = 0; x < xmax; ++x) {
      const double v = ww != 0.0 ? w[size_t(x)] / ww : w[size_t(x)];
      k[x] = v < 0 ? int32_t(-0.5 + v * (1 << kPrecisionBits)) : int32_t(0.5 + v * (1 << kPrecisionBits));
    }
    t.first[size_t(xx)] = xmin;
    t.count[size_t(xx)] = std::max(0, xmax);
  }
  return t;
}

Tensor image_resize(const Tensor& rgb, int64_t out_h, int64_t out_w, ResampleFilter filter) {
  VGEN_ASSERT(rgb.defined() && rgb.is_cpu() && rgb.dtype() == DType::kU8 && rgb.ndim() == 3 && rgb.dim(2) == 3,
              "image_resize takes a CPU u8 [H, W, 3] image, got {}", rgb.defined() ? rgb.str() : "undefined");
  VGEN_CHECK(out_h > 0 && out_w > 0 && out_h <= (int64_t(1) << 20) && out_w <= (int64_t(1) << 20), ExitCode::kInput,
             "cannot resize an image to {}x{} (height x width)", out_h, out_w);
  const int64_t h = rgb.dim(0), w = rgb.dim(1);
  if (out_h == h && out_w == w) return rgb.clone();
  return resample_2d(rgb, out_h, out_w, filter);
}

}  // namespace vgen
