#include "io/image_orientation.h"

#include <cstring>

namespace vgen {

namespace {

struct TiffReader {
  const uint8_t* p;
  size_t n;
  bool little;
  bool has(size_t off, size_t len) const { return off <= n && len <= n - off; }
  uint32_t u16(size_t off) const {
    return little ? uint32_t(p[off]) | uint32_t(p[off + 1]) << 8 : uint32_t(p[off]) << 8 | uint32_t(p[off + 1]);
  }
  uint32_t u32(size_t off) const {
    return little ? u16(off) | u16(off + 2) << 16 : u16(off) << 16 | u16(off + 2);
  }
};

// The value of one IFD entry holding a single integer (BYTE, SHORT, LONG, SSHORT, SLONG); -1 otherwise.
int entry_integer(const TiffReader& r, size_t entry) {
  const uint32_t type = r.u16(entry + 2), count = r.u32(entry + 4);
  if (count != 1) return -1;
  switch (type) {
    case 1: return int(r.p[entry + 8]);
    case 3: return int(r.u16(entry + 8));
    case 8: return int(int16_t(uint16_t(r.u16(entry + 8))));
    case 4: case 9: {
      const int64_t v = type == 4 ? int64_t(r.u32(entry + 8)) : int64_t(int32_t(r.u32(entry + 8)));
      return v >= 0 && v <= 0xffff ? int(v) : -1;
    }
    default: return -1;
  }
}

}  // namespace

int exif_orientation(const uint8_t* data, size_t size) {
  if (size >= 6 && std::memcmp(data, "Exif\0\0", 6) == 0) data += 6, size -= 6;
  if (size < 8) return 0;
  TiffReader r{data, size, data[0] == 'I'};
  if (!((data[0] == 'I' && data[1] == 'I') || (data[0] == 'M' && data[1] == 'M')) || r.u16(2) != 42) return 0;
  const size_t ifd = r.u32(4);
  if (!r.has(ifd, 2)) return 0;
  const size_t entries = r.u16(ifd);
  for (size_t i = 0; i < entries; ++i) {
    const size_t e = ifd + 2 + 12 * i;
    if (!r.has(e, 12)) return 0;
    if (r.u16(e) == 0x0112) return entry_integer(r, e);
  }
  return 0;
}

int xmp_orientation(std::string_view xmp) {
  static constexpr std::string_view kKey = "tiff:Orientation";
  for (size_t at = xmp.find(kKey); at != std::string_view::npos; at = xmp.find(kKey, at + 1)) {
    std::string_view rest = xmp.substr(at + kKey.size());
    if (rest.size() >= 3 && rest[0] == '=' && rest[1] == '"' && rest[2] >= '0' && rest[2] <= '9') return rest[2] - '0';
    if (rest.size() >= 2 && rest[0] == '>' && rest[1] >= '0' && rest[1] <= '9') return rest[1] - '0';
  }
  return 0;
}

Tensor apply_orientation(const Tensor& rgb, int orientation) {
  if (orientation < 2 || orientation > 8) return rgb;
  const int64_t h = rgb.dim(0), w = rgb.dim(1);
  const bool swap = orientation >= 5;
  const int64_t oh = swap ? w : h, ow = swap ? h : w;
  Tensor out = Tensor::empty({oh, ow, 3}, DType::kU8);
  const uint8_t* src = rgb.data<uint8_t>();
  uint8_t* dst = out.data<uint8_t>();
  for (int64_t y = 0; y < oh; ++y) {
    for (int64_t x = 0; x < ow; ++x) {
      int64_t sy = y, sx = x;
      switch (orientation) {
        case 2: sx = w - 1 - x; break;                 // mirror left-right
        case 3: sy = h - 1 - y; sx = w - 1 - x; break;  // rotate 180
        case 4: sy = h - 1 - y; break;                 // mirror top-bottom
        case 5: sy = x; sx = y; break;                 // transpose
        case 6: sy = h - 1 - x; sx = y; break;         // rotate 90 clockwise
        case 7: sy = h - 1 - x; sx = w - 1 - y; break;  // transverse
        case 8: sy = x; sx = w - 1 - y; break;         // rotate 90 counter-clockwise
      }
      std::memcpy(dst + (y * ow + x) * 3, src + (sy * w + sx) * 3, 3);
    }
  }
  return out;
}

}  // namespace vgen
