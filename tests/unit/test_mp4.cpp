// MP4 writer: odd sizes decode with the right frame count and colours (checked with ffprobe/ffmpeg),
// float → uint8 truncation like diffusers' export_to_video, and the raw fallback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "io/mp4_writer.h"
#include "ops/video_frames.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  pclose(p);
  return out;
}

fs::path temp_dir(const char* tag) {
  fs::path d = fs::temp_directory_path() / (std::string(tag) + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

// [F, H, W, 3]: four flat colour quadrants that change per frame (robust to chroma subsampling).
Tensor test_frames(int f, int h, int w) {
  Tensor t = Tensor::empty({f, h, w, 3}, DType::kU8);
  uint8_t* p = t.data<uint8_t>();
  for (int i = 0; i < f; ++i)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int q = (y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1);
        uint8_t* px = p + ((size_t(i) * h + y) * w + x) * 3;
        px[0] = uint8_t((q == 0 || q == 3) ? 200 : 30 + 10 * i);
        px[1] = uint8_t(q == 1 ? 180 : 40);
        px[2] = uint8_t(q == 2 ? 220 : 60 + 5 * i);
      }
  return t;
}

}  // namespace

TEST(Mp4, OddSizeDecodesWithRightFrameCount) {
  if (!mp4_supported()) GTEST_SKIP() << "built without FFmpeg";
  fs::path dir = temp_dir("vgen_mp4_");
  const int F = 9, H = 33, W = 47;
  Tensor frames = test_frames(F, H, W);
  std::string path = (dir / "0000-odd.mp4").string();
  VideoOptions opt;
  opt.fps = 16;
  opt.crf = 18;
  EXPECT_EQ(write_video(path, frames, opt), path);
  ASSERT_TRUE(fs::is_regular_file(path));
  EXPECT_FALSE(fs::exists(dir / "0000-odd.tmp.mp4"));  // temporary renamed away

  std::string probe = run_capture("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                                  "stream=codec_name,width,height,pix_fmt,nb_read_frames,r_frame_rate -of json '" +
                                  path + "'");
  Json j = Json::parse(probe);
  ASSERT_EQ(j["streams"].size(), 1u) << probe;
  Json s = j["streams"][0];
  EXPECT_EQ(s["codec_name"], "h264");
  EXPECT_EQ(s["pix_fmt"], "yuv420p");
  EXPECT_EQ(s["width"], W + 1);  // padded to even
  EXPECT_EQ(s["height"], H + 1);
  EXPECT_EQ(s["nb_read_frames"], std::to_string(F));
  EXPECT_EQ(s["r_frame_rate"], "16/1");

  // Decode back to RGB and compare the colours (RGB order, value range) away from quadrant edges.
  std::string raw = (dir / "decoded.rgb").string();
  ASSERT_EQ(std::system(("ffmpeg -v error -y -i '" + path + "' -f rawvideo -pix_fmt rgb24 '" + raw + "'").c_str()), 0);
  std::ifstream in(raw, std::ios::binary);
  std::vector<uint8_t> dec((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int W2 = W + 1, H2 = H + 1;
  ASSERT_EQ(dec.size(), size_t(F) * H2 * W2 * 3);
  double err = 0;
  int64_t n = 0;
  const uint8_t* src = frames.data<uint8_t>();
  for (int f = 0; f < F; ++f)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        if (std::abs(y - H / 2) < 3 || std::abs(x - W / 2) < 3) continue;
        for (int c = 0; c < 3; ++c) {
          err += std::abs(int(dec[((size_t(f) * H2 + y) * W2 + x) * 3 + c]) - int(src[((size_t(f) * H + y) * W + x) * 3 + c]));
          ++n;
        }
      }
  EXPECT_LT(err / double(n), 4.0);
  fs::remove_all(dir);
}

TEST(Mp4, EvenSizeAndUnwritableDir) {
  if (!mp4_supported()) GTEST_SKIP() << "built without FFmpeg";
  fs::path dir = temp_dir("vgen_mp4e_");
  std::string path = (dir / "even.mp4").string();
  write_video(path, test_frames(1, 16, 16), VideoOptions{});
  std::string probe = run_capture("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                                  "stream=width,height,nb_read_frames -of csv=p=0 '" + path + "'");
  EXPECT_EQ(probe.substr(0, probe.find_last_not_of("\n") + 1), "16,16,1");
  // Under a regular file: kOutput naming the path, nothing left behind.
  std::ofstream(dir / "file") << "x";
  try {
    write_video((dir / "file" / "x.mp4").string(), test_frames(1, 16, 16), VideoOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kOutput);
    EXPECT_NE(e.message().find("x.tmp.mp4"), std::string::npos) << e.message();
  }
  fs::remove_all(dir);
}

// The preflight check of the encoder: the sizes and settings a batch uses open; settings the
// encoder refuses are kOutput naming the caller's `what` and the settings, before any rendering.
TEST(Mp4, EncoderCheck) {
  if (!mp4_supported()) {
    EXPECT_NO_THROW(check_video_encoder(1280, 720, VideoOptions{}, "x"));  // raw RGB needs no encoder
    return;
  }
  EXPECT_NO_THROW(check_video_encoder(1280, 720, VideoOptions{}, "x"));
  EXPECT_NO_THROW(check_video_encoder(33, 17, VideoOptions{}, "x"));  // odd sizes are padded, as write_video does
  VideoOptions bad;
  bad.preset = "no-such-preset";
  try {
    check_video_encoder(64, 64, bad, "output (H.264 for 64x64 videos)");
    FAIL() << "a preset libx264 does not know was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kOutput);
    EXPECT_NE(e.message().find("output (H.264 for 64x64 videos)"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("preset no-such-preset"), std::string::npos) << e.message();
  }
}

TEST(Mp4, FloatToU8TruncatesLikeExportToVideo) {
  Tensor f = Tensor::from_vector({0.f, 0.5f, 0.999f, 1.f, -0.1f, 1.5f, NAN, 0.00392f, 0.2f, 0.8f, 0.3f, 0.7f},
                                 {1, 2, 2, 3});
  Tensor u = frames_to_u8(f);
  ASSERT_EQ(u.shape(), (Shape{1, 2, 2, 3}));
  const uint8_t* p = u.data<uint8_t>();
  std::vector<int> got(p, p + 12);
  // numpy: (np.float32(v) * 255).astype(np.uint8) after clamping to [0, 1]
  std::vector<int> want = {0, 127, 254, 255, 0, 255, 0, 0, 51, 204, 76, 178};
  EXPECT_EQ(got, want);
}

TEST(Mp4, VaeVideoToFrames) {
  // [1, 3, F=2, H=1, W=2] in [-1, 1] → [F, H, W, 3]
  std::vector<float> v = {-1.f, 0.f, 1.f, 0.5f,   // R
                          -0.5f, 0.25f, 2.f, -3.f,  // G
                          0.9f, -0.9f, 0.1f, -0.1f};  // B
  Tensor u = video_to_u8_frames(Tensor::from_vector(v, {1, 3, 2, 1, 2}));
  ASSERT_EQ(u.shape(), (Shape{2, 1, 2, 3}));
  const uint8_t* p = u.data<uint8_t>();
  auto conv = [](float x) { return int(uint8_t(std::min(1.f, std::max(0.f, x * 0.5f + 0.5f)) * 255.f)); };
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(int(p[i * 3 + c]), conv(v[c * 4 + i])) << i << "," << c;
  EXPECT_EQ(int(p[0]), 0);
  EXPECT_EQ(int(p[2 * 3 + 1]), 255);
}

TEST(Mp4, RawFallback) {
  fs::path dir = temp_dir("vgen_raw_");
  Tensor frames = test_frames(3, 5, 7);
  std::string out = write_raw_rgb((dir / "0001-x.mp4").string(), frames, VideoOptions{12, 18});
  EXPECT_EQ(out, (dir / "0001-x.rgb").string());
  EXPECT_EQ(fs::file_size(out), frames.nbytes());
  Json side = read_json_file((dir / "0001-x.json").string(), ExitCode::kInput);
  EXPECT_EQ(side["frames"], 3);
  EXPECT_EQ(side["height"], 5);
  EXPECT_EQ(side["width"], 7);
  EXPECT_EQ(side["fps"], 12);
  EXPECT_EQ(side["format"], "rgb24");
  fs::remove_all(dir);
}
