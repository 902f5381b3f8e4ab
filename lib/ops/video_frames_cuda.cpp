// The device side of ops/video_frames.h: kernels/video_frames on compute_stream().
#include "core/cuda_stream.h"
#include "kernels/video_frames/frames_u8.cuh"
#include "ops/device_op_checks.h"
#include "ops/video_frames.h"

namespace vgen {

using namespace device_ops;

Tensor cuda_video_to_u8_frames(const Tensor& video0) {
  const Tensor& video = video0;
  const kern::FloatType t = act_type(video, "video_to_u8_frames", "video");
  VGEN_ASSERT(video.ndim() == 4, "video_to_u8_frames: video {} must be [C, F, H, W]", video.str());
  const int64_t C = video.dim(0), F = video.dim(1), H = video.dim(2), W = video.dim(3);
  Tensor out = Tensor::empty({F, H, W, C}, DType::kU8, Device::kCUDA);  // [F, H, W, C]
  launched(kern::video_frames_u8(video.raw(), t, out.data<uint8_t>(), C, F, H, W, compute_stream()),
           "video_to_u8_frames", video);
  return out;
}

}  // namespace vgen
