// A decoded video as the 8-bit frames an encoder takes: diffusers' postprocess
// ((v·0.5 + 0.5).clamp(0, 1), then numpy's (x·255).astype(uint8), which truncates; NaN → 0).
// CPU reference; frames_u8.cuh has the same contract on the device.
#pragma once
#include <cstdint>

namespace vgen::kern {

// video [C, F, H, W] f32 (C = 3) → frames [F, H, W, C] u8.
void video_frames_u8_ref(const float* video, uint8_t* frames, int64_t C, int64_t F, int64_t H, int64_t W);

}  // namespace vgen::kern
