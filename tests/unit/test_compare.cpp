// vgen compare (tools/compare.h): metrics on known differences, bounds, videos on one side only,
// non-finite values, and the errors for bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "io/safetensors.h"
#include "tools/compare.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("vgen_compare_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    a_ = root_ / "a", b_ = root_ / "b";
    fs::remove_all(root_);
    fs::create_directories(a_);
    fs::create_directories(b_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A video of 2 frames at 3x4 in [-0.5, 0.5] and latents of 40 values, from one seed.
  static std::vector<float> values(size_t n, int seed, float lo, float hi) {
    std::vector<float> v(n);
    uint32_t s = 2654435761u * uint32_t(seed + 1);
    for (float& x : v) {
      s = s * 1664525u + 1013904223u;
      x = lo + (hi - lo) * float(s >> 8) / float(1u << 24);
    }
    return v;
  }
  static void write(const fs::path& dir, const std::string& stem, const std::vector<float>& lat,
                    const std::vector<float>& vid, Shape vid_shape = {1, 3, 2, 3, 4}) {
    save_safetensors((dir / (stem + ".safetensors")).string(),
                     {{"latents", Tensor::from_vector(lat, {1, 4, 1, 2, 5})}, {"video", Tensor::from_vector(vid, vid_shape)}});
  }
  std::vector<float> lat_ = values(40, 1, -2.0f, 2.0f), vid_ = values(72, 2, -0.5f, 0.5f);
  fs::path root_, a_, b_;
};

ExitCode code_of(const std::function<void()>& fn, std::string* msg) {
  try {
    fn();
  } catch (const Error& e) {
    *msg = e.message();
    return e.code();
  }
  return ExitCode::kOk;
}

}  // namespace

TEST_F(CompareTest, IdenticalDirectories) {
  write(a_, "0000-a", lat_, vid_);
  write(b_, "0000-a", lat_, vid_);
  fs::create_directories(a_ / ".text_cache");
  write(a_ / ".text_cache", "not-a-video", lat_, vid_);  // below the directory: not a video
  fs::create_directories(a_ / "dir.safetensors");      // a directory, not a file
  const Comparison c = compare_outputs(a_.string(), b_.string(), {});
  ASSERT_EQ(c.videos.size(), 1u);
  EXPECT_EQ(c.compared, 1);
  EXPECT_EQ(c.failed, 0);
  const VideoComparison& v = c.videos[0];
  EXPECT_EQ(v.name, "0000-a");
  EXPECT_EQ(v.status, "ok");
  EXPECT_EQ(v.frames, 2);
  EXPECT_EQ(v.latents_rel_l2, 0.0);
  EXPECT_TRUE(std::isinf(v.video_psnr_db) && v.video_psnr_db > 0);
  EXPECT_EQ(v.video_max_abs, 0.0);
  const Json j = comparison_json(c);
  EXPECT_TRUE(j["videos"][0]["video_psnr_db"].is_null());
  EXPECT_TRUE(j["videos"][0]["identical"].get<bool>());
  EXPECT_NE(format_comparison(c).find("1 compared, 0 failed"), std::string::npos);
}

TEST_F(CompareTest, KnownDifferencesAndBounds) {
  // Video +0.02 in [-1, 1] is +0.01 in [0, 1]: MSE 1e-4, PSNR 40 dB; latents × 1.01: rel-L2 0.01.
  std::vector<float> lat2 = lat_, vid2 = vid_;
  for (float& x : lat2) x *= 1.01f;
  for (float& x : vid2) x += 0.02f;
  write(a_, "0000-a", lat_, vid_);
  write(b_, "0000-a", lat2, vid2);
  Comparison c = compare_outputs(a_.string(), b_.string(), {});
  ASSERT_EQ(c.videos.size(), 1u);
  const VideoComparison& v = c.videos[0];
  EXPECT_NEAR(v.video_psnr_db, 40.0, 1e-3);
  EXPECT_NEAR(v.latents_rel_l2, 0.01, 1e-6);
  EXPECT_NEAR(v.video_max_abs, 0.01, 1e-6);
  EXPECT_EQ(v.status, "ok");

  EXPECT_EQ(compare_outputs(a_.string(), b_.string(), {39.0, -1.0}).failed, 0);
  c = compare_outputs(a_.string(), b_.string(), {41.0, -1.0});
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.videos[0].status, "over");
  EXPECT_EQ(compare_outputs(a_.string(), b_.string(), {-1.0, 0.011}).failed, 0);
  EXPECT_EQ(compare_outputs(a_.string(), b_.string(), {-1.0, 0.009}).videos[0].status, "over");
}

TEST_F(CompareTest, VideoIsComparedAfterThePostprocessClamp) {
  // Both map to 1 after (v·0.5 + 0.5) clamped to [0, 1], as in the written frames.
  std::vector<float> v1(72, 1.5f), v2(72, 2.0f);
  write(a_, "0000-a", lat_, v1);
  write(b_, "0000-a", lat_, v2);
  const Comparison c = compare_outputs(a_.string(), b_.string(), {});
  EXPECT_TRUE(std::isinf(c.videos[0].video_psnr_db));
  EXPECT_EQ(c.videos[0].video_max_abs, 0.0);
}

TEST_F(CompareTest, OneSidedAndNonFiniteVideosFail) {
  write(a_, "0000-a", lat_, vid_);
  write(b_, "0000-a", lat_, vid_);
  write(a_, "0001-only-a", lat_, vid_);
  write(b_, "0002-only-b", lat_, vid_);
  std::vector<float> bad = lat_;
  bad[7] = std::numeric_limits<float>::quiet_NaN();
  write(a_, "0003-nan", lat_, vid_);
  write(b_, "0003-nan", bad, vid_);
  const Comparison c = compare_outputs(a_.string(), b_.string(), {});
  ASSERT_EQ(c.videos.size(), 4u);
  EXPECT_EQ(c.compared, 2);
  EXPECT_EQ(c.failed, 3);
  EXPECT_EQ(c.videos[0].status, "ok");
  EXPECT_EQ(c.videos[1].status, "only_in_a");
  EXPECT_EQ(c.videos[2].status, "only_in_b");
  EXPECT_EQ(c.videos[3].status, "nan");
  const Json j = comparison_json(c);
  EXPECT_TRUE(j["videos"][3]["latents_rel_l2"].is_null());
  EXPECT_EQ(j["failed"].get<int>(), 3);
}

TEST_F(CompareTest, NonFiniteValuesOnEitherSideFail) {
  std::vector<float> nan_vid = vid_, inf_lat = lat_;
  nan_vid[5] = std::numeric_limits<float>::quiet_NaN();
  inf_lat[3] = std::numeric_limits<float>::infinity();
  write(a_, "0000-video-nan-in-a", lat_, nan_vid);
  write(b_, "0000-video-nan-in-a", lat_, vid_);
  write(a_, "0001-latents-inf-in-b", lat_, vid_);
  write(b_, "0001-latents-inf-in-b", inf_lat, vid_);
  const Comparison c = compare_outputs(a_.string(), b_.string(), {});
  ASSERT_EQ(c.videos.size(), 2u);
  EXPECT_EQ(c.videos[0].status, "nan");
  EXPECT_EQ(c.videos[1].status, "nan");
  EXPECT_EQ(c.failed, 2);
  // No video has metrics: the summary says so instead of printing a perfect score.
  const std::string text = format_comparison(c);
  EXPECT_NE(text.find("2 compared, 2 failed; worst latents rel-L2 -, lowest PSNR - dB"), std::string::npos) << text;
}

TEST_F(CompareTest, SummaryOverMeasuredVideos) {
  std::vector<float> vid2 = vid_;
  for (float& x : vid2) x += 0.02f;  // 40 dB
  write(a_, "0000-same", lat_, vid_);
  write(b_, "0000-same", lat_, vid_);
  write(a_, "0001-differs", lat_, vid_);
  write(b_, "0001-differs", lat_, vid2);
  write(a_, "0002-only-a", lat_, vid_);
  const std::string text = format_comparison(compare_outputs(a_.string(), b_.string(), {}));
  EXPECT_NE(text.find("2 compared, 1 failed;"), std::string::npos) << text;
  EXPECT_NE(text.find("lowest PSNR 40.00 dB, mean PSNR of the differing 40.00 dB"), std::string::npos) << text;
}

TEST_F(CompareTest, DanglingLinksAreNotVideos) {
  write(a_, "0000-a", lat_, vid_);
  write(b_, "0000-a", lat_, vid_);
  fs::create_symlink(root_ / "gone.safetensors", a_ / "0001-dangling.safetensors");
  fs::create_symlink(root_ / "gone.mp4", a_ / "latest.mp4");
  const Comparison c = compare_outputs(a_.string(), b_.string(), {});
  ASSERT_EQ(c.videos.size(), 1u);
  EXPECT_EQ(c.failed, 0);
}

TEST_F(CompareTest, BadInputNamesTheProblem) {
  std::string msg;
  EXPECT_EQ(code_of([&] { compare_outputs((root_ / "none").string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("none"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { compare_outputs(a_.string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("save_tensors"), std::string::npos) << msg;

  write(a_, "0000-a", lat_, vid_);
  write(b_, "0000-a", lat_, std::vector<float>(36, 0.1f), {1, 3, 1, 3, 4});
  EXPECT_EQ(code_of([&] { compare_outputs(a_.string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("'video'"), std::string::npos) << msg;
  EXPECT_NE(msg.find((b_ / "0000-a.safetensors").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,3,2,3,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,3,1,3,4]"), std::string::npos) << msg;

  save_safetensors((b_ / "0000-a.safetensors").string(),
                   {{"latents", Tensor::from_vector(lat_, {1, 4, 1, 2, 5})},
                    {"video", Tensor::from_vector({}, {1, 3, 0, 3, 4})}});
  save_safetensors((a_ / "0000-a.safetensors").string(),
                   {{"latents", Tensor::from_vector(lat_, {1, 4, 1, 2, 5})},
                    {"video", Tensor::from_vector({}, {1, 3, 0, 3, 4})}});
  EXPECT_EQ(code_of([&] { compare_outputs(a_.string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("empty tensor"), std::string::npos) << msg;
  write(a_, "0000-a", lat_, vid_);

  save_safetensors((b_ / "0000-a.safetensors").string(), {{"video", Tensor::from_vector(vid_, {1, 3, 2, 3, 4})}});
  EXPECT_EQ(code_of([&] { compare_outputs(a_.string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("'latents'"), std::string::npos) << msg;

  std::ofstream((b_ / "0000-a.safetensors").string(), std::ios::binary | std::ios::trunc) << "not safetensors";
  EXPECT_EQ(code_of([&] { compare_outputs(a_.string(), b_.string(), {}); }, &msg), ExitCode::kInput);
  EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
}
