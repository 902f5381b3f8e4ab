// Still images for image-to-video (docs/images.md): PNG and JPEG decoded with libpng and
// libjpeg-turbo (the libraries Pillow uses) into 8-bit RGB exactly as
// `ImageOps.exif_transpose(Image.open(f)).convert("RGB")` gives them, which is what diffusers'
// `load_image` hands the pipelines: the EXIF (or XMP) orientation applied; grey replicated; alpha
// dropped, not composited; palettes looked up; 16-bit samples as Pillow converts them. Every
// failure is a kInput error naming the file and the problem.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace vgen {

// Images larger than this on either side are refused before anything is decoded (so at most
// 256 MP, 768 MiB as RGB).
inline constexpr int64_t kMaxImageSide = 16384;

struct ImageLimits {
  int64_t max_side = kMaxImageSide;
  int64_t max_file_bytes = int64_t(1) << 30;
  // libjpeg's working memory (a progressive JPEG keeps all coefficients: 2 bytes per sample).
  int64_t max_decoder_bytes = int64_t(8) * kMaxImageSide * kMaxImageSide;
};

// True when this build decodes images (VGEN_IMAGES=ON).
bool image_decoding_supported();

// The bytes of the image file at `path` (kInput: no such file, a directory, unreadable, larger than
// limits.max_file_bytes), for decode_image.
std::vector<uint8_t> read_image_bytes(const std::string& path, const ImageLimits& limits = {});
// The file at `path` → CPU u8 [H, W, 3].
Tensor read_image(const std::string& path, const ImageLimits& limits = {});
// The same from bytes in memory; `name` stands for the file in errors.
Tensor decode_image(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits = {});

}  // namespace vgen
