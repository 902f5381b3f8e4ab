// VideoSink: videos are written on the writer thread and recorded in submission order once their
// files are in place; an encode failure (injected mid-file, or a directory that does not exist)
// fails that video alone and leaves no temporary file; the tensors file; an error of the records
// hook reaches the producer; the destructor drains; the test hooks are read from the environment.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "batch/video_sink.h"

using namespace vgen;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("vgen_sink_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Tensor frames(int f = 5, int h = 16, int w = 16) {
  Tensor t = Tensor::empty({f, h, w, 3}, DType::kU8);
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = uint8_t(i * 7);
  return t;
}

FinishedVideo video(const fs::path& dir, int index, bool rendered = true) {
  FinishedVideo v;
  v.report.index = index;
  v.report.name = "000" + std::to_string(index) + "-clip";
  if (rendered) {
    v.frames = frames();
  } else {
    v.report.status = "failed";
    v.report.error = "NaN or Inf in the latents";
  }
  v.mp4_path = (dir / (v.report.name + ".mp4")).string();
  return v;
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().string());
  return out;
}

}  // namespace

TEST(VideoSink, WritesOnTheWriterThreadAndRecordsInOrderOnceTheFilesExist) {
  fs::path dir = fresh_dir("order");
  const auto main_id = std::this_thread::get_id();
  std::vector<size_t> sizes;
  bool files_in_place = true, off_main = true;
  VideoSink sink(VideoSinkOptions{}, [&](const std::vector<VideoReport>& rs) {
    sizes.push_back(rs.size());
    off_main = off_main && std::this_thread::get_id() != main_id;
    const VideoReport& last = rs.back();
    if (last.status == "ok") files_in_place = files_in_place && fs::exists(last.output);
  });
  sink.submit(video(dir, 0));
  sink.submit(video(dir, 1, false));  // a failed render: recorded in its turn, nothing written
  sink.submit(video(dir, 2));
  std::vector<VideoReport> rs = sink.finish();
  ASSERT_EQ(rs.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rs[size_t(i)].index, i);
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2, 3}));
  EXPECT_TRUE(files_in_place);
  EXPECT_TRUE(off_main);
  for (int i : {0, 2}) {
    const VideoReport& r = rs[size_t(i)];
    EXPECT_EQ(r.status, "ok") << r.error;
    EXPECT_TRUE(fs::exists(r.output)) << r.output;
    EXPECT_GT(r.seconds.mp4_encode, 0);
    EXPECT_GE(r.seconds.total, r.seconds.mp4_encode);
  }
  EXPECT_EQ(rs[1].status, "failed");
  EXPECT_EQ(rs[1].error, "NaN or Inf in the latents");
  EXPECT_TRUE(rs[1].output.empty());
  EXPECT_EQ(rs[1].seconds.mp4_encode, 0);
  EXPECT_FALSE(fs::exists(dir / "0001-clip.mp4"));
  EXPECT_TRUE(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST(VideoSink, InjectedEncodeFailureFailsThatVideoAloneAndLeavesNoTemporary) {
  fs::path dir = fresh_dir("inject");
  VideoSinkOptions opt;
  opt.inject_encode_fail = 1;
  VideoSink sink(opt);
  for (int i = 0; i < 3; ++i) sink.submit(video(dir, i));
  std::vector<VideoReport> rs = sink.finish();
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].status, "ok");
  EXPECT_EQ(rs[2].status, "ok");
  EXPECT_EQ(rs[1].status, "failed");
  EXPECT_NE(rs[1].error.find("injected encode failure"), std::string::npos) << rs[1].error;
  EXPECT_TRUE(rs[1].output.empty());
  EXPECT_GT(rs[1].seconds.mp4_encode, 0);
  EXPECT_FALSE(fs::exists(dir / "0001-clip.mp4"));
  EXPECT_FALSE(fs::exists(dir / "0001-clip.rgb"));
  EXPECT_TRUE(temporaries(dir).empty()) << temporaries(dir)[0];
  fs::remove_all(dir);
}

TEST(VideoSink, UnwritableOutputFailsThatVideoAlone) {
  fs::path dir = fresh_dir("unwritable");
  VideoSink sink(VideoSinkOptions{});
  FinishedVideo bad = video(dir, 0);
  bad.mp4_path = (dir / "missing" / "0000-clip.mp4").string();
  sink.submit(std::move(bad));
  sink.submit(video(dir, 1));
  std::vector<VideoReport> rs = sink.finish();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].status, "failed");
  EXPECT_NE(rs[0].error.find("missing"), std::string::npos) << rs[0].error;
  EXPECT_EQ(rs[1].status, "ok") << rs[1].error;
  fs::remove_all(dir);
}

TEST(VideoSink, WritesTheTensorsFile) {
  fs::path dir = fresh_dir("tensors");
  VideoSink sink(VideoSinkOptions{});
  FinishedVideo v = video(dir, 0);
  v.tensors_path = (dir / "0000-clip.safetensors").string();
  v.latents = Tensor::zeros({1, 4, 2, 2, 2}, DType::kF32);
  v.video = Tensor::zeros({1, 3, 5, 16, 16}, DType::kF32);
  sink.submit(std::move(v));
  std::vector<VideoReport> rs = sink.finish();
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, "ok") << rs[0].error;
  EXPECT_GT(fs::file_size(dir / "0000-clip.safetensors"), 8u);
  fs::remove_all(dir);
}

TEST(VideoSink, AnErrorOfTheRecordsHookReachesTheProducer) {
  fs::path dir = fresh_dir("hook");
  VideoSink sink(VideoSinkOptions{}, [](const std::vector<VideoReport>&) {
    VGEN_THROW(ExitCode::kOutput, "cannot write timing.json");
  });
  sink.submit(video(dir, 0));
  try {
    sink.finish();
    FAIL() << "the hook's error was lost";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kOutput);
    EXPECT_NE(e.message().find("timing.json"), std::string::npos);
  }
  fs::remove_all(dir);
}

TEST(VideoSink, DestructorWritesWhatWasHandedOver) {
  fs::path dir = fresh_dir("dtor");
  {
    VideoSink sink(VideoSinkOptions{});
    sink.submit(video(dir, 0));
    sink.submit(video(dir, 1));
  }
  int written = 0;
  for (auto& e : fs::directory_iterator(dir))
    written += e.path().extension() == ".mp4" || e.path().extension() == ".rgb";  // .rgb: no FFmpeg
  EXPECT_EQ(written, 2);
  EXPECT_TRUE(temporaries(dir).empty());
  fs::remove_all(dir);
}

TEST(VideoSink, TestHooksComeFromTheEnvironment) {
  VideoOptions vo;
  vo.fps = 24;
  ::setenv("VGEN_INJECT_ENCODE_FAIL", "7", 1);
  ::setenv("VGEN_INJECT_ENCODE_DELAY_MS", "250", 1);
  VideoSinkOptions o = VideoSinkOptions::from_env(vo);
  EXPECT_EQ(o.inject_encode_fail, 7);
  EXPECT_EQ(o.encode_delay_ms, 250);
  EXPECT_EQ(o.video.fps, 24);
  ::unsetenv("VGEN_INJECT_ENCODE_FAIL");
  ::unsetenv("VGEN_INJECT_ENCODE_DELAY_MS");
  o = VideoSinkOptions::from_env(vo);
  EXPECT_EQ(o.inject_encode_fail, -1);
  EXPECT_EQ(o.encode_delay_ms, 0);
}
