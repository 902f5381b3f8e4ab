// A decoded video as the 8-bit frames the writer encodes (kernels/video_frames: diffusers'
// postprocess, then numpy's truncation). On the device the conversion runs there and only the
// bytes cross to the host: a quarter of an f32 video's (a 121-frame 1280×704 clip: 327 MB, not 1.3 GB),
// and no single-threaded host pass over every value.
#pragma once
#include "core/tensor.h"

namespace vgen {

// video [3, F, H, W] or [1, 3, F, H, W] in [-1, 1] (host f32, or device f32 / bf16) → host u8
// frames [F, H, W, 3].
Tensor video_to_u8_frames(const Tensor& video);

// The device half: video [C, F, H, W] f32 / bf16 on the device → device u8 [F, H, W, C].
Tensor cuda_video_to_u8_frames(const Tensor& video);

}  // namespace vgen
