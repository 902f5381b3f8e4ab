// JPEG through libjpeg-turbo with its defaults (accurate integer IDCT, fancy chroma upsampling), as
// Pillow decodes JPEG files, so the pixels are Pillow's (docs/images.md "Formats"): 3 components
// to RGB by the library, grey replicated, 4 components (CMYK, YCCK) read as Adobe-inverted CMYK and
// converted with Pillow's integer formula. A file that ends before the image is complete is
// refused, as Pillow refuses it; recoverable corruption inside the data is decoded as libjpeg
// recovers it.
#ifdef VGEN_WITH_IMAGE_CODECS
#include <cstdio>
// jpeglib.h needs size_t and FILE declared first; jerror.h follows it.
#include <jpeglib.h>
#include <jerror.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <vector>

#include "io/image_codecs.h"
#include "io/image_orientation.h"

#ifndef LIBJPEG_TURBO_VERSION
#warning "JPEG pixels match Pillow's only with libjpeg-turbo (docs/images.md)"
#endif

namespace vgen {

namespace {

// Far more scans than any encoder writes (a progressive file has about 10); more is a corrupt or
// hostile file that would take minutes to decode.
constexpr int kMaxScans = 1000;

// Everything libjpeg touches lives here, so that a longjmp out of libjpeg skips no C++ destructor.
struct JpegCtx {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr jerr;
  jpeg_progress_mgr progress;
  std::jmp_buf jmp;
  char error[JMSG_LENGTH_MAX + 64] = {0};
  bool created = false;
  std::vector<uint8_t> row;
  DecodedImage out;
  ~JpegCtx() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

JpegCtx* ctx_of(j_common_ptr c) { return static_cast<JpegCtx*>(c->client_data); }

[[noreturn]] void jpeg_fail_with(JpegCtx& ctx, const char* what) {
  std::snprintf(ctx.error, sizeof(ctx.error), "%s", what);
  std::longjmp(ctx.jmp, 1);
}

[[noreturn]] void jpeg_fail(j_common_ptr c) {
  JpegCtx* ctx = ctx_of(c);
  if (c->err->msg_code == JERR_EMPTY_IMAGE)
    std::snprintf(ctx->error, sizeof(ctx->error), "zero size (the frame header has a zero dimension)");
  else
    (*c->err->format_message)(c, ctx->error);
  std::longjmp(ctx->jmp, 1);
}

// Warnings are recoverable corruption (decoded as libjpeg recovers it), except the end of the data
// before the end of the image.
void on_jpeg_message(j_common_ptr c, int level) {
  if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) {
    jpeg_fail_with(*ctx_of(c), "truncated file (the data ends before the image is complete)");
  }
}

void on_jpeg_progress(j_common_ptr c) {
  auto* d = reinterpret_cast<j_decompress_ptr>(c);
  if (d->input_scan_number > kMaxScans) {
    JpegCtx* ctx = ctx_of(c);
    std::snprintf(ctx->error, sizeof(ctx->error), "more than %d scans (a corrupt progressive JPEG)", kMaxScans);
    std::longjmp(ctx->jmp, 1);
  }
}

// Header phase; false on an error (message in ctx.error). No local object has a destructor (setjmp).
bool run_jpeg_header(JpegCtx& ctx, const uint8_t* data, size_t size, const ImageLimits& limits) {
  if (setjmp(ctx.jmp)) return false;
  ctx.cinfo.err = jpeg_std_error(&ctx.jerr);
  ctx.jerr.error_exit = jpeg_fail;
  ctx.jerr.emit_message = on_jpeg_message;
  jpeg_create_decompress(&ctx.cinfo);
  ctx.created = true;
  ctx.cinfo.client_data = &ctx;
  ctx.cinfo.mem->max_memory_to_use = long(limits.max_decoder_bytes);
  ctx.progress.progress_monitor = on_jpeg_progress;
  ctx.cinfo.progress = &ctx.progress;
  jpeg_mem_src(&ctx.cinfo, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&ctx.cinfo, JPEG_APP0 + 1, 0xffff);  // EXIF and XMP
  jpeg_read_header(&ctx.cinfo, TRUE);
  return true;
}

// Pillow's CMYK to RGB for an Adobe-inverted CMYK sample (docs/images.md "Formats").
uint8_t cmyk_channel(uint8_t inverted_c, uint8_t inverted_k) {
  const int c = 255 - inverted_c, nk = inverted_k;  // nk = 255 - k, k = 255 - inverted_k
  int t = c * nk + 128;
  t = ((t >> 8) + t) >> 8;
  return uint8_t(std::clamp(nk - t, 0, 255));
}

void jpeg_row_to_rgb(const uint8_t* in, uint8_t* out, int64_t width, int components) {
  for (int64_t x = 0; x < width; ++x, out += 3) {
    if (components == 3) {
      std::memcpy(out, in + 3 * x, 3);
    } else if (components == 1) {
      out[0] = out[1] = out[2] = in[x];
    } else {
      const uint8_t* p = in + 4 * x;
      for (int ch = 0; ch < 3; ++ch) out[ch] = cmyk_channel(p[ch], p[3]);
    }
  }
}

// Pixel phase, after the header was checked and ctx.out.rgb / ctx.row sized.
bool run_jpeg_pixels(JpegCtx& ctx) {
  if (setjmp(ctx.jmp)) return false;
  jpeg_start_decompress(&ctx.cinfo);
  const int64_t width = ctx.out.rgb.dim(1), height = ctx.out.rgb.dim(0);
  if (int64_t(ctx.cinfo.output_width) != width || int64_t(ctx.cinfo.output_height) != height)
    jpeg_fail_with(ctx, "the decoder's output size differs from the frame header");
  uint8_t* rgb = ctx.out.rgb.data<uint8_t>();
  while (ctx.cinfo.output_scanline < ctx.cinfo.output_height) {
    JSAMPROW rows[1] = {ctx.row.data()};
    const int64_t y = ctx.cinfo.output_scanline;
    if (jpeg_read_scanlines(&ctx.cinfo, rows, 1) != 1) jpeg_fail_with(ctx, "the decoder returned no row");
    jpeg_row_to_rgb(ctx.row.data(), rgb + y * width * 3, width, ctx.cinfo.output_components);
  }
  return true;  // what follows the last row (up to EOI) is not needed, as for Pillow
}

// EXIF: the first APP1 "Exif" segment with the payloads of later ones appended (as Pillow joins
// them); XMP: the last APP1 XMP packet.
void read_jpeg_orientation(JpegCtx& ctx) {
  static constexpr char kXmp[] = "http://ns.adobe.com/xap/1.0/";  // then a NUL
  std::vector<uint8_t> exif;
  for (jpeg_saved_marker_ptr m = ctx.cinfo.marker_list; m; m = m->next) {
    if (m->marker != JPEG_APP0 + 1) continue;
    const uint8_t* d = m->data;
    const size_t n = m->data_length;
    if (n >= 6 && std::memcmp(d, "Exif\0\0", 6) == 0) {
      exif.insert(exif.end(), exif.empty() ? d : d + 6, d + n);
    } else if (n >= sizeof(kXmp) && std::memcmp(d, kXmp, sizeof(kXmp)) == 0) {
      ctx.out.xmp_orientation =
          xmp_orientation(std::string_view(reinterpret_cast<const char*>(d) + sizeof(kXmp), n - sizeof(kXmp)));
    }
  }
  if (!exif.empty()) ctx.out.exif_orientation = exif_orientation(exif.data(), exif.size());
}

}  // namespace

DecodedImage decode_jpeg(const uint8_t* data, size_t size, const std::string& name, const ImageLimits& limits) {
  JpegCtx ctx;
  if (!run_jpeg_header(ctx, data, size, limits))
    VGEN_THROW(ExitCode::kInput, "image {}: not a readable JPEG file: {}", name, ctx.error);
  check_image_size(ctx.cinfo.image_width, ctx.cinfo.image_height, name, limits);
  const int components = ctx.cinfo.num_components;
  VGEN_CHECK(components == 1 || components == 3 || components == 4, ExitCode::kInput,
             "image {}: JPEG with {} colour components is not supported (1, 3 or 4)", name, components);
  ctx.cinfo.out_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  ctx.out.rgb = Tensor::empty({int64_t(ctx.cinfo.image_height), int64_t(ctx.cinfo.image_width), 3}, DType::kU8);
  ctx.row.resize(size_t(ctx.cinfo.image_width) * size_t(components));
  if (!run_jpeg_pixels(ctx)) VGEN_THROW(ExitCode::kInput, "image {}: not a readable JPEG file: {}", name, ctx.error);
  read_jpeg_orientation(ctx);
  return std::move(ctx.out);
}

}  // namespace vgen

#endif  // VGEN_WITH_IMAGE_CODECS
