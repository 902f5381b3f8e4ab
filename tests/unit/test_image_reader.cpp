// Image decoding (io/image_reader.h) against Pillow: every PNG colour type and bit depth and every
// JPEG kind of tests/images decodes to exactly the pixels of
// ImageOps.exif_transpose(Image.open(f)).convert("RGB"); errors are kInput naming file and problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "image_test_util.h"
#include "io/image_orientation.h"
#include "io/image_reader.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs f, expecting a kInput error whose message holds every needle.
void expect_input_error(const std::function<void()>& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInput) << e.message();
    for (const auto& n : needles) EXPECT_NE(e.message().find(n), std::string::npos) << e.message() << " lacks " << n;
  }
}

Tensor decode(const std::vector<uint8_t>& b, const ImageLimits& limits = {}) {
  return decode_image(b.data(), b.size(), "test.img", limits);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("vgen_image_test_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

// A build with image decoding reads the file; one without refuses every image, naming the option.
TEST(ImageReader, DecodesOrTheErrorNamesTheOption) {
  const std::string path = test::images_dir() + "/files/rgb8.png";
  if (image_decoding_supported())
    EXPECT_EQ(read_image(path).ndim(), 3);
  else
    expect_input_error([&] { read_image(path); }, {"rgb8.png", "VGEN_IMAGES=OFF"});
}

TEST(ImageReader, DecodesEveryTestImageExactlyAsPillow) {
  VGEN_SKIP_WITHOUT_DECODERS();
  double worst = 0;
  for (const Json& f : test::image_cases()["decoded"]) {
    const std::string rel = f.get<std::string>();
    const Tensor got = read_image(test::images_dir() + "/" + rel);
    const Tensor want = test::expected_images().get("decoded_" + fs::path(rel).filename().string());
    const double d = test::max_abs_diff(got, want);
    EXPECT_EQ(d, 0.0) << rel << ": " << got.str() << " vs Pillow " << want.str();
    worst = std::max(worst, d);
  }
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST(ImageReader, FixtureImagesAreRgbOfTheirSize) {
  VGEN_SKIP_WITHOUT_DECODERS();
  const Tensor t = read_image(test::golden_i2v_dir() + "/images/resize_0.png");
  EXPECT_EQ(t.shape(), (Shape{37, 53, 3}));
  EXPECT_EQ(t.dtype(), DType::kU8);
}

TEST(ImageReader, FileErrorsNameTheFile) {
  TempDir tmp;
  const std::string missing = (tmp.path / "missing.png").string();
  expect_input_error([&] { read_image(missing); }, {missing, "no such file"});
  expect_input_error([&] { read_image(tmp.path.string()); }, {tmp.path.string(), "directory"});
  const std::string empty = (tmp.path / "empty.jpg").string();
  std::ofstream(empty).close();
  expect_input_error([&] { read_image(empty); }, {empty, "empty"});
  const std::string text = (tmp.path / "notes.png").string();
  std::ofstream(text) << "just some text, no image";
  expect_input_error([&] { read_image(text); }, {text, "not an image"});
  const std::string gif = (tmp.path / "a.gif").string();
  std::ofstream(gif) << "GIF89a....";
  expect_input_error([&] { read_image(gif); }, {gif, "GIF images are not supported"});
  ImageLimits small;
  small.max_file_bytes = 100;
  expect_input_error([&] { read_image(test::images_dir() + "/files/rgb8.png", small); }, {"rgb8.png", "100 bytes"});
}

TEST(ImageReader, TruncatedFilesAreRefused) {
  VGEN_SKIP_WITHOUT_DECODERS();
  for (const char* name : {"rgb8.png", "rgb8_adam7.png", "q90_420.jpg", "progressive_420.jpg"}) {
    std::vector<uint8_t> b = file_bytes(test::images_dir() + "/files/" + name);
    b.resize(b.size() * 2 / 3);
    expect_input_error([&] { decode(b); }, {"test.img", "truncated"});
  }
}

TEST(ImageReader, CorruptPngChecksumIsRefused) {
  VGEN_SKIP_WITHOUT_DECODERS();
  std::vector<uint8_t> b = file_bytes(test::images_dir() + "/files/rgb8.png");
  b[23] ^= 0x01;  // IHDR height 13 -> 12, so its CRC no longer matches
  expect_input_error([&] { decode(b); }, {"test.img", "PNG"});
}

TEST(ImageReader, ZeroAndAbsurdSizesAreRefusedBeforeDecoding) {
  VGEN_SKIP_WITHOUT_DECODERS();
  std::vector<uint8_t> png = file_bytes(test::images_dir() + "/files/rgb8.png");
  std::vector<uint8_t> zero = png;
  std::memset(zero.data() + 16, 0, 4);  // IHDR width 0
  expect_input_error([&] { decode(zero); }, {"test.img", "zero size"});
  std::vector<uint8_t> huge = png;
  huge[16] = 0, huge[17] = 0, huge[18] = 0x4e, huge[19] = 0x21;  // width 20001
  expect_input_error([&] { decode(huge); }, {"20001x13", "too large", "16384"});
  std::vector<uint8_t> jpg = file_bytes(test::images_dir() + "/files/q90_420.jpg");
  for (size_t i = 2; i + 8 < jpg.size(); ++i) {
    if (jpg[i] == 0xff && jpg[i + 1] == 0xc0) {  // SOF0: length, precision, height, width
      jpg[i + 5] = 0x4e, jpg[i + 6] = 0x21;
      break;
    }
  }
  expect_input_error([&] { decode(jpg); }, {"30x20001", "too large"});
  ImageLimits tiny;
  tiny.max_side = 16;
  expect_input_error([&] { decode(png, tiny); }, {"19x13", "at most 16"});
}

TEST(ImageOrientation, ExifTagInBothByteOrders) {
  // TIFF header, IFD0 at 8 with one entry: Orientation, SHORT, count 1, value 6.
  const uint8_t le[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0};
  const uint8_t be[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(exif_orientation(le, sizeof(le)), 6);
  EXPECT_EQ(exif_orientation(be, sizeof(be)), 8);
  uint8_t two[sizeof(le)];
  std::memcpy(two, le, sizeof(le));
  two[14] = 2;  // count 2: present but not one number
  EXPECT_EQ(exif_orientation(two, sizeof(two)), -1);
  EXPECT_EQ(exif_orientation(le, 12), 0);  // the entry is cut off
  const uint8_t junk[] = {'X', 'X', 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(exif_orientation(junk, sizeof(junk)), 0);
}

TEST(ImageOrientation, XmpAttributeAndElement) {
  EXPECT_EQ(xmp_orientation(R"(<rdf:Description tiff:Orientation="6"/>)"), 6);
  EXPECT_EQ(xmp_orientation("<tiff:Orientation>3</tiff:Orientation>"), 3);
  EXPECT_EQ(xmp_orientation("<tiff:Orientation> 3</tiff:Orientation>"), 0);
  EXPECT_EQ(xmp_orientation("nothing here"), 0);
}
