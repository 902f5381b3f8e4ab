#include "io/mp4_writer.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>

#include "core/json.h"
#include "core/log.h"

#ifdef VGEN_WITH_FFMPEG
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}
#endif

namespace vgen {
namespace fs = std::filesystem;

namespace {

struct FrameDims {
  int64_t f, h, w;
};

FrameDims check_frames(const Tensor& frames, const std::string& path) {
  VGEN_CHECK(frames.defined() && frames.is_cpu() && frames.dtype() == DType::kU8 && frames.ndim() == 4 &&
                 frames.dim(3) == 3 && frames.numel() > 0,
             ExitCode::kInternal, "{}: video frames must be a non-empty CPU u8 tensor [F, H, W, 3], got {}", path,
             frames.defined() ? frames.str() : std::string("undefined"));
  return {frames.dim(0), frames.dim(1), frames.dim(2)};
}

// `<dir>/<name>.mp4` → `<dir>/<name>` (any other extension is kept).
std::string strip_mp4(const std::string& path) {
  fs::path p(path);
  if (p.extension() == ".mp4") p.replace_extension();
  return p.string();
}

void write_file_atomic(const std::string& path, const void* data, size_t n) {
  std::string tmp = strip_mp4(path) + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  VGEN_CHECK(f, ExitCode::kOutput, "cannot write {}: {}", tmp, std::strerror(errno));
  int err = 0;  // the first failing call's errno (ENOSPC, EIO...)
  if (std::fwrite(data, 1, n, f) != n || std::fflush(f) != 0) err = errno;
  if (std::fclose(f) != 0 && !err) err = errno;
  if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    std::remove(tmp.c_str());
    VGEN_THROW(ExitCode::kOutput, "failed to write {}: {}", path, std::strerror(err));
  }
}

}  // namespace

std::string write_raw_rgb(const std::string& path, const Tensor& frames, const VideoOptions& opt) {
  FrameDims d = check_frames(frames, path);
  std::string stem = strip_mp4(path);
  std::string rgb = stem + ".rgb";
  if (opt.fail_after_frames >= 0)
    VGEN_THROW(ExitCode::kOutput, "{}: injected encode failure (test hook)", rgb);
  write_file_atomic(rgb, frames.raw(), frames.nbytes());
  Json side = {{"format", "rgb24"},
               {"layout", "[frames, height, width, 3] uint8"},
               {"frames", d.f},
               {"height", d.h},
               {"width", d.w},
               {"fps", opt.fps},
               {"data", fs::path(rgb).filename().string()},
               {"note", "vgen was built without FFmpeg (VGEN_FFMPEG=OFF); encode with: ffmpeg -f rawvideo "
                        "-pix_fmt rgb24 -s WxH -r FPS -i FILE.rgb -c:v libx264 -pix_fmt yuv420p out.mp4"}};
  write_text_file_atomic(stem + ".json", side.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  return rgb;
}

#ifdef VGEN_WITH_FFMPEG
namespace {

std::string av_err(int e) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(e, buf, sizeof(buf));
  return buf;
}

struct Encoder {
  AVFormatContext* oc = nullptr;
  AVCodecContext* ctx = nullptr;
  AVStream* st = nullptr;
  SwsContext* sws = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* pkt = nullptr;
  std::string tmp;
  ~Encoder() {
    av_packet_free(&pkt);
    av_frame_free(&frame);
    sws_freeContext(sws);
    avcodec_free_context(&ctx);
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }
  // Sends one frame (nullptr flushes) and writes every packet the encoder returns.
  void encode(AVFrame* f) {
    int rc = avcodec_send_frame(ctx, f);
    VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: H.264 encoder rejected a frame: {}", tmp, av_err(rc));
    while (true) {
      rc = avcodec_receive_packet(ctx, pkt);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
      VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: H.264 encoding failed: {}", tmp, av_err(rc));
      av_packet_rescale_ts(pkt, ctx->time_base, st->time_base);
      pkt->stream_index = st->index;
      rc = av_interleaved_write_frame(oc, pkt);
      VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: writing a packet failed: {}", tmp, av_err(rc));
    }
  }
};

// FFmpeg's own log lines only for errors (vgen reports what failed itself).
void quiet_ffmpeg_logs() {
  static std::once_flag quiet;
  std::call_once(quiet, [] { av_log_set_level(AV_LOG_ERROR); });
}

// yuv420p needs even sizes: odd ones are padded by one row/column.
int even_up(int64_t n) { return int(n + n % 2); }

// The H.264 encoder (libx264, else any H.264 encoder of this FFmpeg) opened for w2 x h2 yuv420p at
// opt's fps, crf and preset; kOutput naming `what` when there is none or it refuses the settings.
AVCodecContext* open_encoder(int w2, int h2, const VideoOptions& opt, bool global_header, const std::string& what) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_H264);
  VGEN_CHECK(codec, ExitCode::kOutput, "{}: this FFmpeg has no H.264 encoder (libx264)", what);
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  VGEN_CHECK(ctx, ExitCode::kOutput, "{}: out of memory setting up the encoder", what);
  ctx->width = w2;
  ctx->height = h2;
  ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  ctx->time_base = AVRational{1, opt.fps};
  ctx->framerate = AVRational{opt.fps, 1};
  if (global_header) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary* copts = nullptr;
  av_dict_set(&copts, "crf", std::to_string(opt.crf).c_str(), 0);
  av_dict_set(&copts, "preset", opt.preset.c_str(), 0);
  const int rc = avcodec_open2(ctx, codec, &copts);
  av_dict_free(&copts);
  if (rc < 0) {
    avcodec_free_context(&ctx);
    VGEN_THROW(ExitCode::kOutput, "{}: cannot open the {} encoder ({}x{}, crf {}, preset {}): {}", what, codec->name,
               w2, h2, opt.crf, opt.preset, av_err(rc));
  }
  return ctx;
}

void write_mp4(const std::string& tmp, const Tensor& frames, const FrameDims& d, const VideoOptions& opt) {
  quiet_ffmpeg_logs();
  const int w2 = even_up(d.w), h2 = even_up(d.h);
  Encoder e;
  e.tmp = tmp;
  int rc = avformat_alloc_output_context2(&e.oc, nullptr, "mp4", tmp.c_str());
  VGEN_CHECK(rc >= 0 && e.oc, ExitCode::kOutput, "{}: cannot create an MP4 muxer: {}", tmp, av_err(rc));
  e.st = avformat_new_stream(e.oc, nullptr);
  VGEN_CHECK(e.st, ExitCode::kOutput, "{}: out of memory setting up the MP4 stream", tmp);
  e.ctx = open_encoder(w2, h2, opt, (e.oc->oformat->flags & AVFMT_GLOBALHEADER) != 0, tmp);
  rc = avcodec_parameters_from_context(e.st->codecpar, e.ctx);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: encoder parameters: {}", tmp, av_err(rc));
  e.st->time_base = e.ctx->time_base;
  e.st->avg_frame_rate = e.ctx->framerate;
  rc = avio_open(&e.oc->pb, tmp.c_str(), AVIO_FLAG_WRITE);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "cannot open {} for writing: {}", tmp, av_err(rc));
  rc = avformat_write_header(e.oc, nullptr);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: writing the MP4 header failed: {}", tmp, av_err(rc));

  // Same conversion as the ffmpeg command line (bicubic, BT.601 limited range, untagged).
  e.sws = sws_getContext(w2, h2, AV_PIX_FMT_RGB24, w2, h2, AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr,
                         nullptr);
  e.frame = av_frame_alloc();
  e.pkt = av_packet_alloc();
  VGEN_CHECK(e.sws && e.frame && e.pkt, ExitCode::kOutput, "{}: cannot set up the RGB→YUV conversion", tmp);
  e.frame->format = AV_PIX_FMT_YUV420P;
  e.frame->width = w2;
  e.frame->height = h2;
  rc = av_frame_get_buffer(e.frame, 0);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: frame buffer: {}", tmp, av_err(rc));

  // Padded copy (last row/column repeated), rows at a 64-byte stride and two spare zero rows: swscale's
  // SIMD paths read past a row's end and past the last row, and must read defined bytes.
  const int stride = (w2 * 3 + 63) / 64 * 64;
  std::vector<uint8_t> rgb(size_t(stride) * (h2 + 2), 0);
  const uint8_t* src = frames.data<uint8_t>();
  const size_t row = size_t(d.w) * 3;
  if (opt.fail_after_frames == 0)
    VGEN_THROW(ExitCode::kOutput, "{}: injected encode failure before the first frame (test hook)", tmp);
  for (int64_t f = 0; f < d.f; ++f) {
    const uint8_t* fr = src + size_t(f) * d.h * row;
    for (int y = 0; y < h2; ++y) {
      const uint8_t* s = fr + size_t(std::min<int64_t>(y, d.h - 1)) * row;
      uint8_t* o = rgb.data() + size_t(y) * stride;
      std::memcpy(o, s, row);
      if (w2 != d.w) std::memcpy(o + row, s + row - 3, 3);
    }
    rc = av_frame_make_writable(e.frame);
    VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: frame buffer: {}", tmp, av_err(rc));
    const uint8_t* planes[1] = {rgb.data()};
    const int strides[1] = {stride};
    sws_scale(e.sws, planes, strides, 0, h2, e.frame->data, e.frame->linesize);
    e.frame->pts = f;
    e.encode(e.frame);
    if (f + 1 == opt.fail_after_frames)
      VGEN_THROW(ExitCode::kOutput, "{}: injected encode failure after {} frame(s) (test hook)", tmp, f + 1);
  }
  e.encode(nullptr);
  rc = av_write_trailer(e.oc);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: writing the MP4 trailer failed: {}", tmp, av_err(rc));
  rc = avio_closep(&e.oc->pb);
  VGEN_CHECK(rc >= 0, ExitCode::kOutput, "{}: closing the file failed: {}", tmp, av_err(rc));
}

}  // namespace

bool mp4_supported() { return true; }

void check_video_encoder(int64_t width, int64_t height, const VideoOptions& opt, const std::string& what) {
  quiet_ffmpeg_logs();
  VGEN_CHECK(opt.fps >= 1 && width >= 1 && height >= 1, ExitCode::kInternal, "{}: {}x{} at {} fps", what, width,
             height, opt.fps);
  AVCodecContext* ctx = open_encoder(even_up(width), even_up(height), opt, true, what);
  avcodec_free_context(&ctx);
}

std::string write_video(const std::string& path, const Tensor& frames, const VideoOptions& opt) {
  FrameDims d = check_frames(frames, path);
  VGEN_CHECK(opt.fps >= 1, ExitCode::kInternal, "{}: fps must be >= 1, got {}", path, opt.fps);
  std::string tmp = strip_mp4(path) + ".tmp.mp4";
  try {
    write_mp4(tmp, frames, d, opt);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    VGEN_THROW(ExitCode::kOutput, "cannot rename {} to {}: {}", tmp, path, std::strerror(errno));
  }
  return path;
}

#else  // no FFmpeg

bool mp4_supported() { return false; }

namespace {
// Said once per job: at the preflight check (every rank, so world rank 0 too, whatever it renders)
// or at the first video written without one.
void warn_raw_video_once() {
  static std::once_flag warned;
  std::call_once(warned, [] {
    log_warn_job("vgen was built without FFmpeg: videos are written as raw RGB24 .rgb files with a .json sidecar");
  });
}
}  // namespace

void check_video_encoder(int64_t, int64_t, const VideoOptions&, const std::string&) {  // raw RGB needs none
  warn_raw_video_once();
}

std::string write_video(const std::string& path, const Tensor& frames, const VideoOptions& opt) {
  warn_raw_video_once();
  return write_raw_rgb(path, frames, opt);
}

#endif

Tensor frames_to_u8(const Tensor& frames0) {
  Tensor frames = frames0.to(Device::kCPU).to(DType::kF32);
  VGEN_CHECK(frames.ndim() == 4 && frames.dim(3) == 3, ExitCode::kInternal,
             "frames_to_u8: expected float frames [F, H, W, 3], got {}", frames.str());
  Tensor out = Tensor::empty(frames.shape(), DType::kU8);
  const float* s = frames.f32();
  uint8_t* o = out.data<uint8_t>();
  const int64_t n = frames.numel();
  for (int64_t i = 0; i < n; ++i) {
    float v = s[i];
    v = std::isnan(v) ? 0.f : std::min(1.f, std::max(0.f, v));
    o[i] = uint8_t(v * 255.f);  // numpy: (frame * 255).astype(np.uint8) truncates
  }
  return out;
}

}  // namespace vgen
