// The Wan 2.2 VAE's CUDA layout kernels (kernels/vae_up/vae_up.cuh) against their CPU references
// (vae_up_ref.h) on odd shapes, f32 and bf16: the DupUp3D add of every time phase (vectorised and
// scalar paths, padding channels left alone), the unpatchify writer into a frame range of a video;
// the shuffle fused with the DupUp3D add against the two passes, byte for byte; and their ops
// (ops/vae_up_ops.h) on device tensors against the same ops on the host.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <iostream>

#include "kernels/vae_up/vae_up.cuh"
#include "kernels/vae_up/vae_up_ref.h"
#include "ops/vae_subpixel_ops.h"
#include "ops/vae_up_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

// Channels-first [C, P] ↔ channels-last [P, C] (host).
std::vector<float> to_last(const std::vector<float>& x, int64_t C, int64_t P) {
  std::vector<float> y(x.size());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t p = 0; p < P; ++p) y[size_t(p * C + c)] = x[size_t(c * P + p)];
  return y;
}

TEST(VaeUpKernelsGpu, DupUpAddMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t Cin, Cout, Cy, T, H, W, ft; };
  // Cout 16 / Cy 16: the 8-wide path; Cy 24 > Cout: padding; odd counts: the scalar path.
  for (const Case c : {Case{16, 16, 16, 1, 3, 5, 2}, Case{32, 16, 24, 2, 2, 3, 1}, Case{5, 5, 5, 1, 3, 3, 2},
                       Case{6, 3, 4, 1, 1, 7, 1}, Case{3, 6, 6, 2, 2, 2, 2}})
    for (DType dt : {DType::kF32, DType::kBF16})
      for (int64_t phase = 0; phase < c.ft; ++phase) {
        const int64_t fs = 2, P = c.T * c.H * c.W, Po = c.T * fs * c.H * fs * c.W;
        const auto x = maybe_round(random_vec(size_t(c.Cin * P), 1), dt);
        const auto y0 = maybe_round(random_vec(size_t(c.Cy * Po), 2), dt);
        std::vector<float> ref = y0;
        kern::dup_up_add_ref(ref.data(), x.data(), c.Cin, c.Cout, c.Cy, c.T, c.H, c.W, c.ft, fs, phase);
        Tensor dx = device_tensor(to_last(x, c.Cin, P), {c.T, c.H, c.W, c.Cin}, dt);
        Tensor dy = device_tensor(to_last(y0, c.Cy, Po), {c.T, fs * c.H, fs * c.W, c.Cy}, dt);
        ASSERT_EQ(kern::vae_dup_up_add(dy.raw(), dx.raw(), ft(dt), c.T, c.H, c.W, c.Cin, c.Cout, c.Cy, c.ft, fs, phase,
                                       compute_stream()),
                  cudaSuccess);
        const std::vector<float> want = to_last(dt == DType::kBF16 ? rounded_bf16(ref) : ref, c.Cy, Po);
        EXPECT_EQ(host_f32(dy), want) << "Cin " << c.Cin << " Cout " << c.Cout << " " << dtype_name(dt) << " phase "
                                      << phase;
      }
  // Widths that are no whole number of copies, and a phase past factor_t, are refused.
  Tensor d = Tensor::zeros({1, 2, 2, 8}, DType::kF32, Device::kCUDA);
  EXPECT_EQ(kern::vae_dup_up_add(d.raw(), d.raw(), kern::FloatType::kF32, 1, 1, 1, 3, 8, 8, 1, 2, 0, compute_stream()),
            cudaErrorInvalidValue);
  EXPECT_EQ(kern::vae_dup_up_add(d.raw(), d.raw(), kern::FloatType::kF32, 1, 1, 1, 8, 8, 8, 2, 2, 2, compute_stream()),
            cudaErrorInvalidValue);
}

TEST(VaeUpKernelsGpu, UnpatchifyMatchesRef) {
  VGEN_REQUIRE_GPU();
  for (const int64_t p : {1, 2, 3})
    for (DType dt : {DType::kF32, DType::kBF16}) {
      const int64_t C = 3, Cx = C * p * p + 4, T = 2, H = 3, W = 5, F = 5, f0 = 1, plane = p * H * p * W;
      const auto x = maybe_round(random_vec(size_t(Cx * T * H * W), 3, -2.0f, 2.0f), dt);
      std::vector<float> ref(size_t(C * F * plane), 0.0f);
      kern::unpatchify_clamp_ref(x.data(), ref.data() + f0 * plane, Cx, C, p, T, H, W, F * plane, -1.0f, 1.0f);
      Tensor dx = device_tensor(to_last(x, Cx, T * H * W), {T, H, W, Cx}, dt);
      Tensor video = Tensor::zeros({C, F, p * H, p * W}, DType::kF32, Device::kCUDA);
      ASSERT_EQ(kern::vae_unpatchify_to_channels_first(dx.raw(), ft(dt), video.f32() + f0 * plane, T, H, W, Cx, C, p,
                                                       F * plane, -1.0f, 1.0f, compute_stream()),
                cudaSuccess);
      EXPECT_EQ(host_f32(video), ref) << "p " << p << " " << dtype_name(dt);
    }
}

// The ops: device tensors in the channels-last layout equal the host ops in the channels-first one.
TEST(VaeUpKernelsGpu, OpsMatchHostOps) {
  VGEN_REQUIRE_GPU();
  const int64_t Cin = 16, Cout = 8, T = 1, H = 3, W = 4;
  const auto x = random_vec(size_t(Cin * T * H * W), 4), y0 = random_vec(size_t(Cout * T * 4 * H * W), 5);
  Tensor hx = Tensor::from_vector(x, {Cin, T, H, W}), hy = Tensor::from_vector(y0, {Cout, T, 2 * H, 2 * W});
  vae_dup_up_add_(hy, hx, Cout, 1, 2, 0);
  Tensor dx = device_tensor(to_last(x, Cin, T * H * W), {T, H, W, Cin}, DType::kF32);
  Tensor dy = device_tensor(to_last(y0, Cout, T * 4 * H * W), {T, 2 * H, 2 * W, Cout}, DType::kF32);
  vae_dup_up_add_(dy, dx, Cout, 1, 2, 0);
  EXPECT_EQ(host_f32(dy), to_last(host_f32(hy), Cout, T * 4 * H * W));

  Tensor hv = Tensor::zeros({2, 3, 2 * H, 2 * W}, DType::kF32), dv = hv.to(Device::kCUDA);
  Tensor hx2 = Tensor::from_vector(random_vec(size_t(8 * 2 * H * W), 6, -2.0f, 2.0f), {8, 2, H, W});
  Tensor dx2 = device_tensor(to_last(host_f32(hx2), 8, 2 * H * W), {2, H, W, 8}, DType::kF32);
  vae_write_frames_unpatchify(hx2, 2, 2, -1.0f, 1.0f, hv, 1);
  vae_write_frames_unpatchify(dx2, 2, 2, -1.0f, 1.0f, dv, 1);
  EXPECT_EQ(host_f32(dv), host_f32(hv));
}

// The fused shuffle + DupUp3D add equals the sub-pixel shuffle followed by the add, bit for bit
// (the same fp32 sum, one rounding), on the 8-wide and scalar paths, every phase, f32 and bf16;
// and the op on device tensors equals its host composition (f32).
TEST(VaeUpKernelsGpu, ShuffleDupUpEqualsTwoPasses) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t Cin, C, Cr, T, H, W, ft; };
  for (const Case c : {Case{32, 16, 64, 1, 3, 5, 2}, Case{16, 16, 72, 2, 2, 3, 1}, Case{10, 5, 20, 1, 3, 3, 2},
                       Case{6, 3, 13, 1, 1, 7, 1}})
    for (DType dt : {DType::kF32, DType::kBF16})
      for (int64_t phase = 0; phase < c.ft; ++phase) {
        const auto r = maybe_round(random_vec(size_t(c.T * (c.H + 1) * (c.W + 1) * c.Cr), 3), dt);
        const auto x = maybe_round(random_vec(size_t(c.T * c.H * c.W * c.Cin), 4), dt);
        Tensor dr = device_tensor(r, {c.T, c.H + 1, c.W + 1, c.Cr}, dt);
        Tensor dx = device_tensor(x, {c.T, c.H, c.W, c.Cin}, dt);
        Tensor two = vae_subpixel_shuffle(dr, c.C);  // [T, 2H, 2W, C]
        vae_dup_up_add_(two, dx, c.C, c.ft, 2, phase);
        Tensor one = vae_subpixel_shuffle_dup_up(dr, c.C, dx, c.ft, phase);
        ASSERT_EQ(one.shape(), two.shape());
        const auto a = host_f32(one), b = host_f32(two);
        for (size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(bits(a[i]), bits(b[i])) << "C " << c.C << " " << dtype_name(dt) << " phase " << phase << " at " << i;
      }
  const int64_t Cin = 8, C = 8, T = 1, H = 2, W = 3;
  Tensor hr = Tensor::from_vector(random_vec(size_t(4 * C * T * (H + 1) * (W + 1)), 5), {4 * C, T, H + 1, W + 1});
  Tensor hx = Tensor::from_vector(random_vec(size_t(Cin * T * H * W), 6), {Cin, T, H, W});
  Tensor hy = vae_subpixel_shuffle_dup_up(hr, C, hx, 2, 1);  // [C, T, 2H, 2W]
  Tensor dr = device_tensor(to_last(host_f32(hr), 4 * C, T * (H + 1) * (W + 1)), {T, H + 1, W + 1, 4 * C}, DType::kF32);
  Tensor dx = device_tensor(to_last(host_f32(hx), Cin, T * H * W), {T, H, W, Cin}, DType::kF32);
  EXPECT_EQ(host_f32(vae_subpixel_shuffle_dup_up(dr, C, dx, 2, 1)), to_last(host_f32(hy), C, T * 4 * H * W));
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(VaeUpKernelsGpu)
#endif
