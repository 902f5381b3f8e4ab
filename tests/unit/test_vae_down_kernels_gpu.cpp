// The Wan VAE encoder's CUDA kernels against their CPU references (kernels/vae_down/vae_down_ref.h)
// on odd shapes, f32 and bf16: patchify (channels-first fp32 → channels-last, p = 1 and 2, into a
// view), AvgDown3D added into y (every factor pair, zero frames in front), and the strided
// kernels/conv3d (the downsamplers' padded stride-2 Conv2d and stride-2 time_conv, general strides)
// on the GEMM fallback and on cuDNN where it serves, through the Tensor-level ops too.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <fmt/format.h>

#include <iostream>

#include "kernels/conv3d/conv3d.cuh"
#include "kernels/vae_down/vae_down.cuh"
#include "kernels/vae_down/vae_down_ref.h"
#include "ops/vae_device_ops.h"
#include "ops/vae_down_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

// [A, B] → [B, A] (host)
std::vector<float> transpose(const std::vector<float>& x, int64_t A, int64_t B) {
  std::vector<float> y(x.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) y[size_t(b * A + a)] = x[size_t(a * B + b)];
  return y;
}

double rel_err(const std::vector<float>& out, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    num += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

TEST(VaeDownGpu, PatchifyMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t C, T, H, W, p; };
  for (const Case c : {Case{3, 1, 8, 12, 2}, Case{3, 4, 6, 10, 2}, Case{3, 2, 5, 7, 1}, Case{2, 3, 9, 6, 3}})
    for (DType dt : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(::testing::Message() << c.C << "x" << c.T << "x" << c.H << "x" << c.W << " p" << c.p << " "
                                        << dtype_name(dt));
      const auto x = maybe_round(random_vec(size_t(c.C * c.T * c.H * c.W), 5), dt);
      const int64_t Cp = c.C * c.p * c.p, h = c.H / c.p, w = c.W / c.p;
      std::vector<float> ref(x.size());
      kern::patchify_ref(x.data(), ref.data(), c.C, c.T, c.H, c.W, c.p);  // [Cp, T, h, w]
      // Into the body of a buffer with one frame in front (as the conv input).
      Tensor buf = poisoned({c.T + 1, h, w, Cp}, dt), body = buf.narrow(1, c.T);
      vae_patchify_into(Tensor::from_vector(x, {c.C, c.T, c.H, c.W}).to(Device::kCUDA), c.p, body);
      EXPECT_EQ(host_f32(body), transpose(ref, Cp, c.T * h * w));
    }
}

TEST(VaeDownGpu, AvgDownAddMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t Cin, T, H, W, Cout, ft, fs; };
  for (const Case c : {Case{8, 4, 6, 4, 16, 2, 2}, Case{8, 1, 6, 4, 16, 2, 2}, Case{16, 3, 4, 8, 16, 1, 2},
                       Case{5, 2, 3, 3, 5, 1, 1}, Case{12, 5, 2, 4, 24, 2, 2}, Case{96, 2, 4, 4, 96, 2, 2}})
    for (DType dt : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(::testing::Message() << c.Cin << " T" << c.T << " " << c.H << "x" << c.W << " → " << c.Cout
                                        << " ft" << c.ft << " fs" << c.fs << " " << dtype_name(dt));
      const auto x = maybe_round(random_vec(size_t(c.Cin * c.T * c.H * c.W), 7), dt);
      const int64_t To = kern::avg_down_frames(c.T, c.ft), h = c.H / c.fs, w = c.W / c.fs, S = To * h * w;
      const auto y0 = maybe_round(random_vec(size_t(c.Cout * S), 8), dt);
      std::vector<float> ref = y0;
      kern::avg_down_add_ref(x.data(), ref.data(), c.Cin, c.T, c.H, c.W, c.Cout, c.ft, c.fs);
      Tensor dx = device_tensor(transpose(x, c.Cin, c.T * c.H * c.W), {c.T, c.H, c.W, c.Cin}, dt);
      Tensor dy = device_tensor(transpose(y0, c.Cout, S), {To, h, w, c.Cout}, dt);
      vae_avg_down_add_(dy, dx, c.ft, c.fs);
      EXPECT_LE(rel_err(host_f32(dy), transpose(ref, c.Cout, S)), dt == DType::kF32 ? 1e-6 : 4e-3);
    }
}

struct StridedCase {
  int64_t Cin, Ti, Hi, Wi, Cout, kt, kh, kw;
  kern::Conv3dPad pad;
  int64_t st, ss;
};

std::string strided_name(const StridedCase& c) {
  return fmt::format("Cin{} T{} {}x{} Cout{} k{}x{}x{} pad{},{},{},{} stride{},{}", c.Cin, c.Ti, c.Hi, c.Wi, c.Cout,
                     c.kt, c.kh, c.kw, c.pad.top, c.pad.bottom, c.pad.left, c.pad.right, c.st, c.ss);
}

const StridedCase kStridedCases[] = {
    {16, 4, 8, 12, 16, 1, 3, 3, {0, 1, 0, 1}, 1, 2},   // downsample resample (even frame)
    {8, 1, 7, 9, 8, 1, 3, 3, {0, 1, 0, 1}, 1, 2},      // odd frame size, one frame
    {3, 2, 6, 6, 5, 1, 3, 3, {0, 1, 0, 1}, 1, 2},      // tiny channels
    {16, 5, 4, 6, 16, 3, 1, 1, {0, 0, 0, 0}, 2, 1},    // time_conv over [cache, 4 frames]
    {24, 3, 3, 5, 24, 3, 1, 1, {0, 0, 0, 0}, 2, 1},    // time_conv over [cache, 2 frames]
    {6, 7, 9, 10, 4, 3, 3, 3, {1, 0, 2, 1}, 3, 2},     // general strides
    {8, 4, 5, 5, 8, 1, 1, 1, {0, 0, 0, 0}, 2, 2},      // pointwise with strides
};

// Runs one case on one backend; false when cuDNN declined it (printed).
bool run_strided(const StridedCase& c, DType dt, kern::ConvBackend backend) {
  SCOPED_TRACE(::testing::Message() << strided_name(c) << " " << dtype_name(dt) << " "
                                    << kern::conv_backend_name(backend));
  const int64_t taps = c.kt * c.kh * c.kw, HW = c.Hi * c.Wi;
  const auto x = maybe_round(random_vec(size_t(c.Cin * c.Ti * HW), 21), dt);  // [Cin, Ti, Hi, Wi]
  const auto w = maybe_round(random_vec(size_t(c.Cout * c.Cin * taps), 22), dt);  // [Cout, Cin, taps]
  const auto b = random_vec(size_t(c.Cout), 23);
  kern::Conv3dArgs a;
  a.Cin = c.Cin, a.Ti = c.Ti, a.Hi = c.Hi, a.Wi = c.Wi, a.Cout = c.Cout, a.kt = c.kt, a.kh = c.kh, a.kw = c.kw;
  a.pad = c.pad, a.stride_t = c.st, a.stride_s = c.ss, a.type = ft(dt);
  const int64_t So = a.To() * a.Ho() * a.Wo();
  std::vector<float> ref(size_t(c.Cout * So));
  kern::conv3d_strided_ref(x.data(), w.data(), b.data(), ref.data(), c.Cin, c.Ti, c.Hi, c.Wi, c.Cout, c.kt, c.kh, c.kw,
                           c.pad, c.st, c.ss);
  std::vector<float> w_cl(w.size());
  for (int64_t co = 0; co < c.Cout; ++co) {
    const auto wc = transpose(std::vector<float>(w.begin() + co * c.Cin * taps, w.begin() + (co + 1) * c.Cin * taps),
                              c.Cin, taps);
    std::copy(wc.begin(), wc.end(), w_cl.begin() + co * c.Cin * taps);
  }
  Tensor dx = device_tensor(transpose(x, c.Cin, c.Ti * HW), {c.Ti, c.Hi, c.Wi, c.Cin}, dt);
  Tensor dw = device_tensor(w_cl, {c.Cout, c.kt, c.kh, c.kw, c.Cin}, dt), db = device_tensor(b, {c.Cout}, DType::kF32);
  Tensor dy = poisoned({a.To(), a.Ho(), a.Wo(), c.Cout}, dt);
  a.x = dx.raw(), a.w = dw.raw(), a.bias = db.f32(), a.y = dy.raw();
  kern::ConvBackend chosen{};
  size_t ws = 0;
  const cudaError_t pe = kern::conv3d_prepare(a, backend, &chosen, &ws);
  if (backend == kern::ConvBackend::kCudnn && pe == cudaErrorNotSupported) {
    std::cout << "[vae down conv] cuDNN declined " << strided_name(c) << " " << dtype_name(dt) << ": "
              << kern::conv3d_last_error() << "\n";
    return false;
  }
  EXPECT_EQ(pe, cudaSuccess) << kern::conv3d_last_error();
  if (pe != cudaSuccess) return false;
  Tensor work = Tensor::empty({int64_t(ws) + 1}, DType::kU8, Device::kCUDA);
  EXPECT_EQ(kern::conv3d_forward(a, chosen, work.raw(), ws, compute_stream()), cudaSuccess)
      << kern::conv3d_last_error();
  EXPECT_LE(rel_err(host_f32(dy), transpose(ref, c.Cout, So)), dt == DType::kF32 ? 1e-5 : 5e-3);
  return true;
}

TEST(VaeDownGpu, StridedConvGemmFallbackMatchesRef) {
  VGEN_REQUIRE_GPU();
  for (const StridedCase& c : kStridedCases)
    for (DType dt : {DType::kF32, DType::kBF16}) run_strided(c, dt, kern::ConvBackend::kGemm);
}

TEST(VaeDownGpu, StridedConvCudnnMatchesRefWhereItServes) {
  VGEN_REQUIRE_GPU();
  int served = 0;
  for (const StridedCase& c : kStridedCases)
    for (DType dt : {DType::kF32, DType::kBF16}) {
      if (kern::conv3d_cudnn_built()) served += run_strided(c, dt, kern::ConvBackend::kCudnn);
      EXPECT_TRUE(run_strided(c, dt, kern::ConvBackend::kAuto));
    }
  std::cout << "[vae down conv] cuDNN served " << served << " of " << 2 * std::size(kStridedCases) << " cases\n";
}

TEST(VaeDownGpu, StridedConvOpMatchesHostOp) {
  VGEN_REQUIRE_GPU();
  // The Tensor-level op on both devices: host weights [Cout, Cin, kh, kw] (Conv2d) vs the device layout.
  const int64_t Cin = 8, Cout = 12, T = 3, H = 10, W = 6;
  VaeConvWeights hc;
  hc.cin = Cin, hc.cout = hc.cout_store = Cout, hc.kt = 1, hc.kh = 3, hc.kw = 3;
  hc.w = Tensor::from_vector(random_vec(size_t(Cout * Cin * 9), 31), {Cout, Cin, 3, 3});
  hc.b = Tensor::from_vector(random_vec(size_t(Cout), 32), {Cout});
  VaeConvWeights dc = hc;
  dc.w = Tensor::empty({Cout, 1, 3, 3, Cin}, DType::kF32, Device::kCUDA);
  cuda_vae_conv_weight_layout(hc.w.to(Device::kCUDA), dc.w);
  dc.b = hc.b.to(Device::kCUDA);
  const auto x = random_vec(size_t(Cin * T * H * W), 33);
  const VaeConvPolicy conv{};
  const Tensor yh = vae_strided_conv(hc, Tensor::from_vector(x, {Cin, T, H, W}), {0, 1, 0, 1}, 1, 2, conv);
  const Tensor yd = vae_strided_conv(dc, device_tensor(transpose(x, Cin, T * H * W), {T, H, W, Cin}, DType::kF32),
                                     {0, 1, 0, 1}, 1, 2, conv);
  ASSERT_EQ(yd.shape(), (Shape{T, H / 2, W / 2, Cout}));
  EXPECT_LE(rel_err(host_f32(yd), transpose(host_f32(yh), Cout, T * (H / 2) * (W / 2))), 1e-5);
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(VaeDownGpu)
#endif
