// The decoded video's 8-bit frames on the device (kernels/video_frames) against the CPU reference,
// byte for byte: f32 and bf16 videos, odd sizes, values past [-1, 1], the rounding boundaries of
// every level and NaN; and ops' video_to_u8_frames on a device video equal to the host path's.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <cmath>
#include <vector>

#include "kernels/video_frames/frames_u8.cuh"
#include "kernels/video_frames/frames_u8_ref.h"
#include "ops/video_frames.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

// Random values in [-1.5, 1.5], then every level's boundary (2·k/255 − 1 and its neighbours) and NaN.
std::vector<float> video_values(size_t n, uint32_t seed, DType dt) {
  std::vector<float> v = random_vec(n, seed, -1.5f, 1.5f);
  size_t i = 0;
  for (int k = 0; k <= 255 && i + 3 < n; ++k, i += 3) {
    const float b = 2.0f * float(k) / 255.0f - 1.0f;
    v[i] = b, v[i + 1] = std::nextafter(b, -2.0f), v[i + 2] = std::nextafter(b, 2.0f);
  }
  if (n > 0) v[n - 1] = NAN;
  return dt == DType::kBF16 ? rounded_bf16(v) : v;
}

TEST(VideoFramesGpu, KernelEqualsReference) {
  VGEN_REQUIRE_GPU();
  for (DType dt : {DType::kF32, DType::kBF16})
    for (auto [F, H, W] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {5, 7, 13}, {9, 48, 80}}) {
      const int64_t C = 3, n = C * F * H * W;
      const std::vector<float> v = video_values(size_t(n), uint32_t(F * 131 + W), dt);
      std::vector<uint8_t> ref(static_cast<size_t>(n));
      kern::video_frames_u8_ref(v.data(), ref.data(), C, F, H, W);
      Tensor dv = device_tensor(v, {C, F, H, W}, dt);
      Tensor got = cuda_video_to_u8_frames(dv).to(Device::kCPU);  // [F, H, W, C]
      ASSERT_EQ(got.shape(), (Shape{F, H, W, C}));
      const uint8_t* g = got.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(int(g[i]), int(ref[size_t(i)])) << dtype_name(dt) << " at " << i;
    }
}

TEST(VideoFramesGpu, DeviceVideoEqualsHostVideo) {
  VGEN_REQUIRE_GPU();
  const int64_t F = 3, H = 10, W = 6;
  const std::vector<float> v = video_values(size_t(3 * F * H * W), 7, DType::kF32);
  Tensor host = Tensor::from_vector(v, {1, 3, F, H, W});
  Tensor a = video_to_u8_frames(host), b = video_to_u8_frames(host.to(Device::kCUDA));
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_TRUE(b.is_cpu());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(int(a.data<uint8_t>()[i]), int(b.data<uint8_t>()[i])) << i;
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(VideoFramesGpu)
#endif
