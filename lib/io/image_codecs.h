// The decoders behind io/image_reader.h (internal): each turns one encoded file into 8-bit RGB as
// stored (before the orientation) and reports the orientation it carries. Errors: kInput, the
// message starting with `name`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/tensor.h"
#include "io/image_reader.h"

namespace vgen {

struct DecodedImage {
  Tensor rgb;                // u8 [H, W, 3] in storage order
  int exif_orientation = 0;  // EXIF tag 0x0112: 0 absent, -1 present but unusable, else its value
  int xmp_orientation = 0;   // tiff:Orientation of the XMP packet, 0 absent
  bool clipped_16bit = false;  // a 16-bit grey sample above 255 became 255 (Pillow's conversion)
};

// The orientation exif_transpose applies: EXIF's when the tag is present, else XMP's; 1..8.
int effective_orientation(const DecodedImage& d);

DecodedImage decode_png(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits);
DecodedImage decode_jpeg(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits);

// Refuses (kInput) a width or height of zero or above limits.max_side.
void check_image_size(int64_t width, int64_t height, const std::string& name, const ImageLimits& limits);

}  // namespace vgen
