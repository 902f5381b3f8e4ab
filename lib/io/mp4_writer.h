// Video output: H.264 (libx264) yuv420p MP4 through FFmpeg, written to a temporary name in the
// same directory and renamed when complete. Without FFmpeg (VGEN_FFMPEG=OFF) the frames are written
// as raw RGB24 (`<stem>.rgb`) with a JSON sidecar (`<stem>.json`).
#pragma once
#include <string>

#include "core/tensor.h"

namespace vgen {

struct VideoOptions {
  int fps = 16;
  int crf = 18;
  std::string preset = "medium";  // libx264 preset
  // Test hook: fail (kOutput) once this many frames went into the temporary file, which is then
  // removed as after any encode failure; without FFmpeg, before anything is written. -1: off.
  int64_t fail_after_frames = -1;
};

// True when MP4 encoding is compiled in.
bool mp4_supported();

// Opens (and closes) the encoder write_video would use for width x height frames with `opt`, so a
// batch learns before rendering that its videos could not be written (an FFmpeg without H.264, a
// preset it refuses). kOutput naming `what` and the reason; nothing to check without FFmpeg.
void check_video_encoder(int64_t width, int64_t height, const VideoOptions& opt, const std::string& what);

// frames: u8 CPU tensor [F, H, W, 3] (RGB). Odd H/W are padded to even by repeating the last
// row/column (yuv420p needs even sizes). Returns the path written: `path` itself with FFmpeg,
// `<path without .mp4>.rgb` without. Errors: kOutput naming the file.
std::string write_video(const std::string& path, const Tensor& frames, const VideoOptions& opt);

// The FFmpeg-less fallback (always compiled): raw RGB24 frames + `<stem>.json` sidecar.
std::string write_raw_rgb(const std::string& path, const Tensor& frames, const VideoOptions& opt);

// Float frames [F, H, W, 3] in [0, 1] → u8 by truncation, `uint8(v * 255)`, exactly like diffusers'
// export_to_video (values are clamped to [0, 1] first; NaN → 0).
Tensor frames_to_u8(const Tensor& frames);

}  // namespace vgen
