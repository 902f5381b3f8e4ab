// The orientation an image file asks for (docs/images.md "Orientation"), read as Pillow reads it for
// ImageOps.exif_transpose: the EXIF Orientation tag (0x0112) of IFD0, else a `tiff:Orientation`
// in the XMP packet; and the transpose that undoes it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/tensor.h"

namespace vgen {

// `data`: an EXIF block (a TIFF header first; a leading "Exif\0\0" is skipped). 0 when there is no
// readable Orientation tag, -1 when the tag is there but not one number, else its value.
int exif_orientation(const uint8_t* data, size_t size);

// The first `tiff:Orientation="N"` or `tiff:Orientation>N` (one digit) of an XMP packet; 0 when absent.
int xmp_orientation(std::string_view xmp);

// rgb u8 [H, W, 3] transposed for orientation 2..8 as exif_transpose does (5-8 swap H and W); any
// other value returns `rgb` itself.
Tensor apply_orientation(const Tensor& rgb, int orientation);

}  // namespace vgen
