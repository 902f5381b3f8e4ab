// Image files (io/image_reader.cpp: libpng and libjpeg-turbo, EXIF/XMP orientation): the input is a
// whole file. Rejected inputs end in kInput; an accepted image is u8 [H, W, 3] within the limits,
// and it resizes (ops/image_resize.cpp) to a small size and to a size of its own shape.
#include "fuzz_common.h"
#include "io/image_reader.h"
#include "ops/image_resize.h"

using namespace vgen;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ImageLimits limits;  // smaller than the product's, so that a claimed size is refused quickly
  limits.max_side = 2048;
  limits.max_decoder_bytes = int64_t(64) << 20;
  fuzz::expect_documented({ExitCode::kInput}, [&] {
    const Tensor img = decode_image(data, size, "input", limits);
    fuzz::check(img.dtype() == DType::kU8 && img.ndim() == 3 && img.dim(2) == 3, "decoded image is not u8 [H, W, 3]",
                img.str());
    const int64_t h = img.dim(0), w = img.dim(1);
    fuzz::check(h >= 1 && w >= 1 && h <= limits.max_side && w <= limits.max_side, "decoded size outside the limits",
                img.str());
    const Tensor small = image_resize(img, 3, 5, ResampleFilter::kLanczos);
    fuzz::check(small.shape() == Shape{3, 5, 3}, "resize shape", small.str());
    if (h * w <= 4096) {
      const Tensor grown = image_resize(img, w, h, ResampleFilter::kBicubic);  // transposed size: both passes
      fuzz::check(grown.shape() == Shape{w, h, 3}, "resize shape", grown.str());
    }
  });
  return 0;
}
