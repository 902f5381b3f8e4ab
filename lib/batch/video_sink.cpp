#include "batch/video_sink.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/log.h"
#include "io/safetensors.h"
#include "batch/resume.h"

namespace vgen {

namespace {

int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : fallback;
}

}  // namespace

VideoSinkOptions VideoSinkOptions::from_env(const VideoOptions& video) {
  VideoSinkOptions o;
  o.video = video;
  o.inject_encode_fail = env_int("VGEN_INJECT_ENCODE_FAIL", -1);
  o.encode_delay_ms = std::max(0, env_int("VGEN_INJECT_ENCODE_DELAY_MS", 0));
  return o;
}

VideoSink::VideoSink(VideoSinkOptions opt, RecordsHook on_recorded)
    : opt_(std::move(opt)), on_recorded_(std::move(on_recorded)), worker_(1) {}

void VideoSink::submit(FinishedVideo v) {
  worker_.push([this, v = std::move(v)]() mutable { write(v); });
}

std::vector<VideoReport> VideoSink::finish() {
  worker_.finish();
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

void VideoSink::write(FinishedVideo& v) {
  VideoReport& r = v.report;
  if (v.frames.defined()) {
    Timer t_mp4;
    try {
      if (opt_.encode_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(opt_.encode_delay_ms));
      // A video is never described by another render's sidecar: the old one goes first, the new
      // one is written after every other file is in place.
      if (!v.sidecar.is_null()) std::remove(sidecar_path(v.mp4_path).c_str());
      VideoOptions vo = opt_.video;
      if (r.index == opt_.inject_encode_fail) vo.fail_after_frames = 1;
      r.output = write_video(v.mp4_path, v.frames, vo);
      v.frames = Tensor();  // the largest buffer goes before the tensors file is built
      if (!v.tensors_path.empty()) save_safetensors(v.tensors_path, {{"latents", v.latents}, {"video", v.video}});
      if (!v.sidecar.is_null()) write_sidecar(v.mp4_path, r.output, std::move(v.sidecar));
    } catch (const Error& e) {
      r.status = "failed";
      r.error = e.message();
      r.output.clear();
      r.fingerprint.clear();
    }
    r.seconds.mp4_encode = t_mp4.seconds();
    r.seconds.total = v.started.seconds();
  }
  v.frames = v.latents = v.video = Tensor();
  if (r.status == "failed") log_warn("prompt {} failed: {}", r.name, r.error);
  std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(r);
  if (on_recorded_) on_recorded_(records_);
}

}  // namespace vgen
