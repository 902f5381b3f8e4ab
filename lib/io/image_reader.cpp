#include "io/image_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/log.h"
#include "io/image_codecs.h"
#include "io/image_orientation.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

bool starts_with(const uint8_t* d, size_t n, const char* magic, size_t len) {
  return n >= len && std::memcmp(d, magic, len) == 0;
}

// A format we recognise but do not decode, for a precise message; nullptr when unknown.
const char* other_format(const uint8_t* d, size_t n) {
  if (starts_with(d, n, "GIF87a", 6) || starts_with(d, n, "GIF89a", 6)) return "GIF";
  if (n >= 12 && starts_with(d, n, "RIFF", 4) && std::memcmp(d + 8, "WEBP", 4) == 0) return "WebP";
  if (starts_with(d, n, "II*\0", 4) || starts_with(d, n, "MM\0*", 4)) return "TIFF";
  if (starts_with(d, n, "BM", 2)) return "BMP";
  if (n >= 12 && std::memcmp(d + 4, "ftyp", 4) == 0) return "HEIF/AVIF or MP4";
  return nullptr;
}

}  // namespace

std::vector<uint8_t> read_image_bytes(const std::string& path, const ImageLimits& limits) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  VGEN_CHECK(fs::exists(st), ExitCode::kInput, "image {}: no such file", path);
  VGEN_CHECK(!fs::is_directory(st), ExitCode::kInput, "image {}: is a directory, not an image file", path);
  FILE* f = std::fopen(path.c_str(), "rb");
  VGEN_CHECK(f, ExitCode::kInput, "image {}: cannot open: {}", path, std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  bool too_big = false;
  while (size_t got = std::fread(buf, 1, sizeof(buf), f)) {
    if (int64_t(bytes.size() + got) > limits.max_file_bytes) {
      too_big = true;
      break;
    }
    bytes.insert(bytes.end(), buf, buf + got);
  }
  const bool failed = std::ferror(f);
  std::fclose(f);
  VGEN_CHECK(!failed, ExitCode::kInput, "image {}: read error", path);
  VGEN_CHECK(!too_big, ExitCode::kInput, "image {}: larger than {} bytes, the limit for an image file", path,
             limits.max_file_bytes);
  return bytes;
}

int effective_orientation(const DecodedImage& d) {
  const int o = d.exif_orientation != 0 ? d.exif_orientation : d.xmp_orientation;
  return o >= 2 && o <= 8 ? o : 1;
}

void check_image_size(int64_t width, int64_t height, const std::string& name, const ImageLimits& limits) {
  VGEN_CHECK(width > 0 && height > 0, ExitCode::kInput, "image {}: zero size ({}x{} pixels)", name, width, height);
  VGEN_CHECK(width <= limits.max_side && height <= limits.max_side, ExitCode::kInput,
             "image {}: {}x{} pixels is too large (at most {} pixels per side)", name, width, height,
             limits.max_side);
}

bool image_decoding_supported() {
#ifdef VGEN_WITH_IMAGE_CODECS
  return true;
#else
  return false;
#endif
}

Tensor decode_image(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits) {
  VGEN_CHECK(size > 0, ExitCode::kInput, "image {}: the file is empty", name);
  const bool png = starts_with(data, size, "\x89PNG\r\n\x1a\n", 8);
  const bool jpeg = starts_with(data, size, "\xff\xd8\xff", 3);
  if (!png && !jpeg) {
    const char* other = other_format(data, size);
    if (other) VGEN_THROW(ExitCode::kInput, "image {}: {} images are not supported (PNG and JPEG are)", name, other);
    VGEN_THROW(ExitCode::kInput, "image {}: not an image (neither PNG nor JPEG data)", name);
  }
#ifndef VGEN_WITH_IMAGE_CODECS
  VGEN_THROW(ExitCode::kInput,
             "image {}: this vgen was built without image decoding (VGEN_IMAGES=OFF); rebuild with "
             "-DVGEN_IMAGES=ON (needs libpng and libjpeg-turbo)",
             name);
#else
  DecodedImage d = png ? decode_png(data, size, name, limits) : decode_jpeg(data, size, name, limits);
  if (d.clipped_16bit)
    log_warn("image {}: 16-bit grey samples above 255 became 255, as Pillow's convert(\"RGB\") does; save the "
             "image with 8 bits per sample to keep its tones",
             name);
  return apply_orientation(d.rgb, effective_orientation(d));
#endif
}

Tensor read_image(const std::string& path, const ImageLimits& limits) {
  std::vector<uint8_t> bytes = read_image_bytes(path, limits);
  return decode_image(bytes.data(), bytes.size(), path, limits);
}

}  // namespace vgen
