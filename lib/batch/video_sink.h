// The replica leader's writer of finished videos: the MP4 (and the output.save_tensors file) of a
// video is written on one background thread while the next video renders, and its report is
// recorded there once its files are in place. At most one finished video waits for the writer, so
// host memory stays flat over a long batch. The writer calls no MPI (the process is only
// MPI_THREAD_FUNNELED) and is the only thread that calls FFmpeg during a batch.
#pragma once
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/tensor.h"
#include "core/timer.h"
#include "io/mp4_writer.h"
#include "io/report.h"
#include "batch/bounded_worker.h"

namespace vgen {

// One video as the render leaves it.
struct FinishedVideo {
  VideoReport report;  // status, error and seconds of the render (mp4_encode and total still open)
  Timer started;       // the video's start: `seconds.total` runs until its files are in place
  Tensor frames;       // u8 [F, H, W, 3] on the CPU; undefined when there is nothing to write
  Tensor latents, video;     // CPU tensors for output.save_tensors
  std::string mp4_path;      // the MP4 to write
  std::string tensors_path;  // the .safetensors file to write; empty: none
  Json sidecar;              // what made it (VideoFingerprints::sidecar), written last; null: none
};

struct VideoSinkOptions {
  VideoOptions video;
  // Test hooks (README "Batch runs"): VGEN_INJECT_ENCODE_FAIL=<index> makes that prompt's MP4 fail
  // after its first frame went into the temporary file; VGEN_INJECT_ENCODE_DELAY_MS=<ms> holds
  // every encode that long, so a finished video is still waiting when a test stops the batch.
  int inject_encode_fail = -1;
  int encode_delay_ms = 0;
  // `video` with the hooks read from the environment.
  static VideoSinkOptions from_env(const VideoOptions& video);
};

// Called on the writer thread after each video is recorded, with every record so far (world rank 0
// rewrites the partial timing.json). An error it throws ends the batch like a writer failure.
using RecordsHook = std::function<void(const std::vector<VideoReport>&)>;

class VideoSink {
 public:
  explicit VideoSink(VideoSinkOptions opt, RecordsHook on_recorded = {});
  // Drains: the videos already handed over are written and recorded (also while an error unwinds).
  ~VideoSink() = default;

  // Hands a video to the writer; blocks while one finished video already waits. A video without
  // frames (a failed render) is only recorded, in its turn. Rethrows an error that escaped the
  // writer (not an encode failure: that marks its video failed).
  void submit(FinishedVideo v);
  // Writes everything handed over, stops the thread and returns the records in submission order;
  // rethrows an error that escaped the writer.
  std::vector<VideoReport> finish();

 private:
  void write(FinishedVideo& v);  // on the writer thread

  const VideoSinkOptions opt_;
  const RecordsHook on_recorded_;
  std::mutex mutex_;
  std::vector<VideoReport> records_;  // guarded by mutex_
  BoundedWorker worker_;              // last member: it is joined before the rest goes away
};

}  // namespace vgen
