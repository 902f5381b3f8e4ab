#include "kernels/video_frames/frames_u8_ref.h"

#include <cstddef>

namespace vgen::kern {

namespace {
// One value of [-1, 1] as its 8-bit level; built with -ffp-contract=off (kernels/CMakeLists.txt) so
// v·0.5 + 0.5 rounds twice, as numpy and the device kernel do.
uint8_t value_u8(float v) {
  float x = v * 0.5f + 0.5f;
  x = x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
  return uint8_t(x * 255.0f);
}
}  // namespace

void video_frames_u8_ref(const float* video, uint8_t* frames, int64_t C, int64_t F, int64_t H, int64_t W) {
  const size_t plane = size_t(F * H * W);
  for (size_t i = 0; i < plane; ++i)
    for (int64_t c = 0; c < C; ++c) frames[i * size_t(C) + size_t(c)] = value_u8(video[size_t(c) * plane + i]);
}

}  // namespace vgen::kern
