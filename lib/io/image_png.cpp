// PNG through libpng, converted as Pillow opens PNG files and converts them to RGB
// (docs/images.md "Formats"): 1/2/4-bit grey scaled to 8 bits, palettes looked up, 16-bit colour
// and grey+alpha samples keep their high byte, 16-bit grey samples above 255 become 255 (Pillow's
// 16-bit grey to RGB), alpha and tRNS dropped; no gamma or colour-profile correction.
#ifdef VGEN_WITH_IMAGE_CODECS
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "io/image_codecs.h"
#include "io/image_orientation.h"

namespace vgen {

namespace {

struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0, pos = 0;
};

// Everything libpng touches lives here, so that a longjmp out of libpng skips no C++ destructor.
struct PngCtx {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngSource src;
  char error[256] = {0};
  bool pixels_done = false;  // an error after the last row (in png_read_end) keeps the image
  int color_type = 0;        // of the file, before any transform
  int channels = 0, bytes_per_sample = 1;
  std::vector<uint8_t> rows;  // one row, or the whole image when interlaced
  DecodedImage out;
  ~PngCtx() { png_destroy_read_struct(&png, &info, nullptr); }
};

void on_png_error(png_structp png, png_const_charp msg) {
  auto* ctx = static_cast<PngCtx*>(png_get_error_ptr(png));
  std::snprintf(ctx->error, sizeof(ctx->error), "%s", msg);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}  // recoverable problems, as Pillow ignores them

void on_png_read(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) png_error(png, "truncated file (the data ends early)");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

// One decoded row (after the transforms set in run_png) → RGB.
void png_row_to_rgb(PngCtx& ctx, const uint8_t* in, uint8_t* out, int64_t width) {
  const int step = ctx.channels * ctx.bytes_per_sample;
  for (int64_t x = 0; x < width; ++x, in += step, out += 3) {
    if (ctx.channels >= 3) {
      std::memcpy(out, in, 3);
    } else if (ctx.bytes_per_sample == 2) {  // 16-bit grey: Pillow clips, it does not scale
      const bool high = in[0] != 0;
      ctx.out.clipped_16bit |= high;
      out[0] = out[1] = out[2] = high ? 255 : in[1];
    } else {
      out[0] = out[1] = out[2] = in[0];
    }
  }
}

// Transforms to 8-bit samples as Pillow's PNG modes unpack them (16-bit grey stays 16-bit).
void set_png_transforms(PngCtx& ctx, int bit_depth) {
  if (ctx.color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(ctx.png);
  if (ctx.color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(ctx.png);
  if (bit_depth == 16 && ctx.color_type != PNG_COLOR_TYPE_GRAY) png_set_strip_16(ctx.png);
}

// libpng over the whole file; false on an error before the last row (message in ctx.error). Every
// object with a destructor is a member of ctx, none is local here (setjmp).
bool run_png(PngCtx& ctx, const ImageLimits& limits) {
  if (setjmp(png_jmpbuf(ctx.png))) return ctx.pixels_done;
  png_set_user_limits(ctx.png, png_uint_32(limits.max_side), png_uint_32(limits.max_side));
  png_set_read_fn(ctx.png, &ctx.src, on_png_read);
  png_read_info(ctx.png, ctx.info);
  const png_uint_32 width = png_get_image_width(ctx.png, ctx.info), height = png_get_image_height(ctx.png, ctx.info);
  ctx.color_type = png_get_color_type(ctx.png, ctx.info);
  set_png_transforms(ctx, png_get_bit_depth(ctx.png, ctx.info));
  const int passes = png_set_interlace_handling(ctx.png);
  png_read_update_info(ctx.png, ctx.info);
  ctx.channels = png_get_channels(ctx.png, ctx.info);
  ctx.bytes_per_sample = png_get_bit_depth(ctx.png, ctx.info) == 16 ? 2 : 1;
  const size_t rowbytes = png_get_rowbytes(ctx.png, ctx.info);
  if (ctx.channels < 1 || ctx.channels > 4 || rowbytes != size_t(width) * ctx.channels * ctx.bytes_per_sample)
    png_error(ctx.png, "unexpected sample layout");
  ctx.out.rgb = Tensor::empty({int64_t(height), int64_t(width), 3}, DType::kU8);
  uint8_t* rgb = ctx.out.rgb.data<uint8_t>();
  if (passes > 1) {  // interlaced: every pass writes into the whole image, converted at the end
    ctx.rows.resize(rowbytes * height);
    for (int pass = 0; pass < passes; ++pass)
      for (png_uint_32 y = 0; y < height; ++y) png_read_row(ctx.png, ctx.rows.data() + size_t(y) * rowbytes, nullptr);
    for (png_uint_32 y = 0; y < height; ++y)
      png_row_to_rgb(ctx, ctx.rows.data() + size_t(y) * rowbytes, rgb + size_t(y) * width * 3, width);
  } else {
    ctx.rows.resize(rowbytes);
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(ctx.png, ctx.rows.data(), nullptr);
      png_row_to_rgb(ctx, ctx.rows.data(), rgb + size_t(y) * width * 3, width);
    }
  }
  ctx.pixels_done = true;
  png_read_end(ctx.png, ctx.info);  // chunks after the pixels: a late eXIf or XMP
  return true;
}

// The orientation from eXIf and from an XMP text chunk (the last one, as Pillow keeps it).
void read_png_orientation(PngCtx& ctx) {
  png_uint_32 num_exif = 0;
  png_bytep exif = nullptr;
  if (png_get_eXIf_1(ctx.png, ctx.info, &num_exif, &exif) && exif)
    ctx.out.exif_orientation = exif_orientation(exif, num_exif);
  png_textp text = nullptr;
  int num_text = 0;
  png_get_text(ctx.png, ctx.info, &text, &num_text);
  for (int i = 0; i < num_text; ++i) {
    if (!text[i].key || !text[i].text || std::strcmp(text[i].key, "XML:com.adobe.xmp") != 0) continue;
    const size_t len = text[i].compression >= PNG_ITXT_COMPRESSION_NONE ? text[i].itxt_length : text[i].text_length;
    ctx.out.xmp_orientation = xmp_orientation(std::string_view(text[i].text, len));
  }
}

// The size in IHDR (the first chunk), checked before libpng allocates anything.
void check_png_header_size(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits) {
  if (size < 24 || std::memcmp(data + 12, "IHDR", 4) != 0) return;  // libpng names the problem
  auto be32 = [&](size_t off) {
    return int64_t(data[off]) << 24 | int64_t(data[off + 1]) << 16 | int64_t(data[off + 2]) << 8 | data[off + 3];
  };
  check_image_size(be32(16), be32(20), name, limits);
}

}  // namespace

DecodedImage decode_png(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits) {
  check_png_header_size(data, size, name, limits);
  PngCtx ctx;
  ctx.src = {data, size, 0};
  ctx.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_png_error, on_png_warning);
  VGEN_CHECK(ctx.png, ExitCode::kInput, "image {}: cannot start the PNG decoder (out of memory)", name);
  ctx.info = png_create_info_struct(ctx.png);
  VGEN_CHECK(ctx.info, ExitCode::kInput, "image {}: cannot start the PNG decoder (out of memory)", name);
  if (!run_png(ctx, limits)) VGEN_THROW(ExitCode::kInput, "image {}: not a readable PNG file: {}", name, ctx.error);
  read_png_orientation(ctx);
  return std::move(ctx.out);
}

}  // namespace vgen

#endif  // VGEN_WITH_IMAGE_CODECS
