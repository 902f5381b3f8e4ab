// CUDA launcher of frames_u8_ref.h's contract: a decoded video on the device as 8-bit frames, so
// only the frames cross to the host (a quarter of the f32 video's bytes). Raw device pointers;
// queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// video [C, F, H, W] (f32 or bf16) → frames [F, H, W, C] u8, as video_frames_u8_ref.
cudaError_t video_frames_u8(const void* video, FloatType type, uint8_t* frames, int64_t C, int64_t F, int64_t H,
                            int64_t W, cudaStream_t stream);

}  // namespace vgen::kern
