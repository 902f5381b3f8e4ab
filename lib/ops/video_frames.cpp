#include "ops/video_frames.h"

#include "core/error.h"
#include "core/no_cuda_error.h"
#include "kernels/video_frames/frames_u8_ref.h"

namespace vgen {

Tensor video_to_u8_frames(const Tensor& video0) {
  Tensor video = video0;
  if (video.ndim() == 5) {
    VGEN_CHECK(video.dim(0) == 1, ExitCode::kInternal, "video_to_u8_frames: batch must be 1, got {}", video.str());
    video = video[0];
  }
  VGEN_CHECK(video.ndim() == 4 && video.dim(0) == 3, ExitCode::kInternal,
             "video_to_u8_frames: expected [3, F, H, W] or [1, 3, F, H, W], got {}", video.str());
  if (!video.is_cpu()) return cuda_video_to_u8_frames(video).to(Device::kCPU);  // [F, H, W, 3]
  video = video.to(DType::kF32);
  Tensor out = Tensor::empty({video.dim(1), video.dim(2), video.dim(3), 3}, DType::kU8);  // [F, H, W, 3]
  kern::video_frames_u8_ref(video.f32(), out.data<uint8_t>(), 3, video.dim(1), video.dim(2), video.dim(3));
  return out;
}

#ifndef VGEN_WITH_CUDA
Tensor cuda_video_to_u8_frames(const Tensor&) { throw_no_cuda("video_to_u8_frames"); }
#endif

}  // namespace vgen
