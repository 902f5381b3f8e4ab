// The Wan VAE's CUDA kernels against their CPU references on odd shapes: channel RMS norm (both
// layouts, ±SiLU, f32/bf16), upsample / interleave / clamp / add / SiLU / output transpose, the
// 3-D conv on every backend (cuDNN when built, the per-tap GEMM fallback) for the decoder's kernel
// shapes and odd channel counts and paddings, and the per-frame attention against attention_ref.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "kernels/attention/attention_ref.h"
#include "kernels/conv3d/conv3d.cuh"
#include "kernels/conv3d/conv3d_ref.h"
#include "kernels/vae_attn/vae_attn.cuh"
#include "kernels/vae_norm/vae_norm.cuh"
#include "kernels/vae_norm/vae_norm_ref.h"
#include "kernels/vae_ops/vae_ops.cuh"
#include "kernels/vae_ops/vae_ops_ref.h"
#include "kernels/vae_subpixel/subpixel_ref.h"
#include "ops/vae_device_ops.h"
#include "ops/vae_subpixel_ops.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

double rel_l2(const std::vector<float>& out, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Inputs of a bf16 kernel are exactly representable; the reference sees the same values.
std::vector<float> inputs(size_t n, uint32_t seed, DType dt, float lo = -1.0f, float hi = 1.0f) {
  auto v = random_vec(n, seed, lo, hi);
  return dt == DType::kBF16 ? rounded_bf16(v) : v;
}

// [A, B] → [B, A] (host)
std::vector<float> transpose(const std::vector<float>& x, int64_t A, int64_t B) {
  std::vector<float> y(x.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) y[size_t(b * A + a)] = x[size_t(a * B + b)];
  return y;
}

// ---------------------------------------------------------------------------------------------
// RMS norm

TEST(VaeNormGpu, ChannelsFirstMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t N, C, S; };
  for (const Case c : {Case{1, 13, 37}, Case{2, 96, 50}, Case{1, 1, 5}, Case{3, 8, 1}})
    for (DType dt : {DType::kF32, DType::kBF16})
      for (bool silu : {false, true}) {
        SCOPED_TRACE(::testing::Message() << c.N << "x" << c.C << "x" << c.S << " " << dtype_name(dt) << " silu=" << silu);
        const size_t n = size_t(c.N * c.C * c.S);
        auto x = inputs(n, 11, dt, -3.0f, 3.0f);
        auto g = random_vec(size_t(c.C), 12, 0.5f, 1.5f);
        std::vector<float> ref(n);
        kern::vae_rms_norm_ref(x.data(), g.data(), ref.data(), c.N, c.C, c.S, silu);
        Tensor dx = device_tensor(x, {int64_t(n)}, dt), dg = device_tensor(g, {c.C}, DType::kF32);
        Tensor dy = Tensor::empty({int64_t(n)}, dt, Device::kCUDA);
        ASSERT_EQ(kern::vae_rms_norm(dx.raw(), ft(dt), dg.f32(), dy.raw(), ft(dt), c.N, c.C, c.S, silu,
                                     kern::VaeLayout::kChannelsFirst, compute_stream()),
                  cudaSuccess);
        EXPECT_LE(rel_l2(host_f32(dy), ref), dt == DType::kF32 ? 1e-6 : 4e-3);
      }
}

TEST(VaeNormGpu, ChannelsLastMatchesRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t P, C; };
  for (const Case c : {Case{37, 13}, Case{50, 24}, Case{7, 384}, Case{9, 390}, Case{1, 1}})
    for (DType xdt : {DType::kF32, DType::kBF16})
      for (DType ydt : {DType::kF32, DType::kBF16})
        for (bool silu : {false, true}) {
          SCOPED_TRACE(::testing::Message() << c.P << "x" << c.C << " " << dtype_name(xdt) << "->" << dtype_name(ydt)
                                            << " silu=" << silu);
          const size_t n = size_t(c.P * c.C);
          auto x = inputs(n, 21, xdt, -2.0f, 2.0f);  // [P, C]
          auto g = random_vec(size_t(c.C), 22, -1.5f, 1.5f);
          std::vector<float> ref_cf(n);
          auto x_cf = transpose(x, c.P, c.C);  // [C, P]
          kern::vae_rms_norm_ref(x_cf.data(), g.data(), ref_cf.data(), 1, c.C, c.P, silu);
          const auto ref = transpose(ref_cf, c.C, c.P);
          Tensor dx = device_tensor(x, {c.P, c.C}, xdt), dg = device_tensor(g, {c.C}, DType::kF32);
          Tensor dy = Tensor::empty({c.P, c.C}, ydt, Device::kCUDA);
          cuda_vae_rms_norm(dx, dg, silu, dy);
          const bool exactish = xdt == DType::kF32 && ydt == DType::kF32;
          EXPECT_LE(rel_l2(host_f32(dy), ref), exactish ? 1e-6 : 4e-3);
        }
}

TEST(VaeNormGpu, InPlaceAndIntoAView) {
  VGEN_REQUIRE_GPU();
  const int64_t P = 29, C = 16;
  auto x = random_vec(size_t(P * C), 31);
  auto g = random_vec(size_t(C), 32);
  auto x_cf = transpose(x, P, C);
  std::vector<float> ref_cf(x.size());
  kern::vae_rms_norm_ref(x_cf.data(), g.data(), ref_cf.data(), 1, C, P, true);
  const auto ref = transpose(ref_cf, C, P);
  Tensor dx = device_tensor(x, {P, C}, DType::kF32), dg = device_tensor(g, {C}, DType::kF32);
  cuda_vae_rms_norm(dx, dg, true, dx);  // y == x
  EXPECT_LE(rel_l2(host_f32(dx), ref), 1e-6);
  // Into frames [2, 3) of a [3, P, C] buffer (what the decoder does for a causal conv input).
  Tensor buf = Tensor::zeros({3, P, C}, DType::kF32, Device::kCUDA);
  Tensor dx2 = device_tensor(x, {1, P, C}, DType::kF32);
  Tensor body = buf.narrow(2, 1);
  cuda_vae_rms_norm(dx2, dg, true, body);
  auto all = host_f32(buf);
  for (int64_t i = 0; i < 2 * P * C; ++i) ASSERT_EQ(all[size_t(i)], 0.0f);
  EXPECT_LE(rel_l2(std::vector<float>(all.begin() + 2 * P * C, all.end()), ref), 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Elementwise / layout ops

// The sub-pixel upsampler's kernels against kernels/vae_subpixel/subpixel_ref.h: the weight fold
// (f32, exact sums of the same order), the phase shuffle and the channel-slice copy (pure copies:
// equal), on the vector path (channels a multiple of 16 bytes) and the scalar one.
TEST(VaeOpsGpu, SubpixelKernelsMatchRef) {
  VGEN_REQUIRE_GPU();
  {
    const int64_t cout = 5, cin = 3;
    auto w3 = inputs(size_t(cout * cin * 9), 40, DType::kF32);
    std::vector<float> ref(size_t(16 * cout * cin));
    kern::subpixel_weight_ref(w3.data(), ref.data(), cout, cin);
    Tensor got = cuda_vae_subpixel_weight(device_tensor(w3, {cout, cin, 3, 3}, DType::kF32));
    ASSERT_EQ(got.shape(), (Shape{4 * cout, cin, 2, 2}));
    EXPECT_EQ(host_f32(got), ref);
  }
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const int64_t P = 2, H = 3, W = 4;
    struct Case { int64_t Cr, C; };
    for (const Case c : {Case{32, 8}, Case{24, 5}, Case{40, 8}}) {  // 40: zero rows past 4·C ignored
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " Cr=" << c.Cr << " C=" << c.C);
      auto r = inputs(size_t(P * (H + 1) * (W + 1) * c.Cr), 41, dt);
      std::vector<float> exp(size_t(P * 4 * H * W * c.C));
      for (int64_t p = 0; p < P; ++p)
        for (int64_t y = 0; y < 2 * H; ++y)
          for (int64_t x = 0; x < 2 * W; ++x)
            for (int64_t ch = 0; ch < c.C; ++ch) {
              const int64_t a = y % 2, b = x % 2, i = y / 2 + a, j = x / 2 + b;
              exp[size_t(((p * 2 * H + y) * 2 * W + x) * c.C + ch)] =
                  r[size_t(((p * (H + 1) + i) * (W + 1) + j) * c.Cr + (2 * a + b) * c.C + ch)];
            }
      Tensor dy = cuda_vae_subpixel_shuffle(device_tensor(r, {P, H + 1, W + 1, c.Cr}, dt), c.C);
      ASSERT_EQ(dy.shape(), (Shape{P, 2 * H, 2 * W, c.C}));
      EXPECT_EQ(host_f32(dy), exp);
    }
    struct Slice { int64_t Cx, c0, C; };
    for (const Slice c : {Slice{16, 8, 8}, Slice{10, 5, 5}, Slice{24, 0, 24}}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " Cx=" << c.Cx << " c0=" << c.c0 << " C=" << c.C);
      auto xc = inputs(size_t(P * H * W * c.Cx), 42, dt);
      std::vector<float> exp(size_t(P * H * W * c.C));
      for (int64_t q = 0; q < P * H * W; ++q)
        for (int64_t ch = 0; ch < c.C; ++ch) exp[size_t(q * c.C + ch)] = xc[size_t(q * c.Cx + c.c0 + ch)];
      Tensor dyc = Tensor::empty({P, H, W, c.C}, dt, Device::kCUDA);
      cuda_vae_channels_into(device_tensor(xc, {P, H, W, c.Cx}, dt), c.c0, c.C, dyc);
      EXPECT_EQ(host_f32(dyc), exp);
    }
  }
}

TEST(VaeOpsGpu, ClampAddSiluMatchRef) {
  VGEN_REQUIRE_GPU();
  const int64_t n = 1037;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dt));
    auto a = inputs(size_t(n), 51, dt, -3.0f, 3.0f), b = inputs(size_t(n), 52, dt, -3.0f, 3.0f);
    std::vector<float> ref(a.size());
    // clamp
    kern::clamp_ref(a.data(), ref.data(), n, -1.0f, 1.0f);
    Tensor da = device_tensor(a, {n}, dt);
    cuda_vae_clamp_(da, -1.0f, 1.0f);
    EXPECT_EQ(host_f32(da), ref);
    // add (exact in f32; one rounding of the fp32 sum in bf16)
    std::vector<float> sum(a);
    kern::add_inplace_ref(sum.data(), b.data(), n);
    Tensor dy = device_tensor(a, {n}, dt), db = device_tensor(b, {n}, dt);
    Tensor dy_odd = dy.narrow(1, n - 1), db_odd = db.narrow(0, n - 1);  // misaligned: scalar path
    cuda_vae_add_(dy, db);
    auto got = host_f32(dy);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[size_t(i)], dt == DType::kF32 ? sum[size_t(i)] : kern::round_bf16(sum[size_t(i)])) << i;
    cuda_vae_add_(dy_odd, db_odd);  // y[i+1] += b[i]
    auto got2 = host_f32(dy);
    for (int64_t i = 1; i < n; ++i) {
      const float e = got[size_t(i)] + b[size_t(i - 1)];
      ASSERT_EQ(got2[size_t(i)], dt == DType::kF32 ? e : kern::round_bf16(e)) << i;
    }
    // silu
    kern::silu_ref(a.data(), ref.data(), n);
    Tensor ds = device_tensor(a, {n}, dt);
    ASSERT_EQ(kern::vae_silu(ds.raw(), ds.raw(), ft(dt), n, compute_stream()), cudaSuccess);
    EXPECT_LE(rel_l2(host_f32(ds), ref), dt == DType::kF32 ? 1e-6 : 4e-3);
  }
}

TEST(VaeOpsGpu, TimeInterleaveMatchesRef) {
  VGEN_REQUIRE_GPU();
  const int64_t C = 5, T = 3, S = 7;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    auto x = inputs(size_t(2 * C * T * S), 61, dt);  // [2, C, T, S]
    std::vector<float> ref(x.size());
    kern::time_interleave2_ref(x.data(), ref.data(), C, T, S);  // [C, 2T, S]
    Tensor dx = device_tensor(x, {int64_t(x.size())}, dt), dy = Tensor::empty({int64_t(x.size())}, dt, Device::kCUDA);
    ASSERT_EQ(kern::vae_time_interleave2(dx.raw(), dy.raw(), ft(dt), C, T, S, false, compute_stream()), cudaSuccess);
    EXPECT_EQ(host_f32(dy), ref);
    // Channels-last: x_cl [T, S, 2C] with x_cl[t, s, k·C + c] = x[k, c, t, s]; y_cl [2T, S, C].
    std::vector<float> x_cl(x.size());
    for (int64_t k = 0; k < 2; ++k)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t s = 0; s < S; ++s) x_cl[size_t((t * S + s) * 2 * C + k * C + c)] = x[size_t(((k * C + c) * T + t) * S + s)];
    Tensor dxl = device_tensor(x_cl, {T, 1, S, 2 * C}, dt);
    Tensor dyl = cuda_vae_time_interleave2(dxl);
    ASSERT_EQ(dyl.shape(), (Shape{2 * T, 1, S, C}));
    auto yl = host_f32(dyl);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t f = 0; f < 2 * T; ++f)
        for (int64_t s = 0; s < S; ++s)
          ASSERT_EQ(yl[size_t((f * S + s) * C + c)], ref[size_t((c * 2 * T + f) * S + s)]);
  }
}

TEST(VaeOpsGpu, WriteFramesTransposesAndClamps) {
  VGEN_REQUIRE_GPU();
  const int64_t T = 2, H = 3, W = 5, Cx = 8, C = 3, F = 6, f0 = 3;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    auto x = inputs(size_t(T * H * W * Cx), 71, dt, -2.0f, 2.0f);
    Tensor dx = device_tensor(x, {T, H, W, Cx}, dt);
    Tensor video = Tensor::zeros({C, F, H, W}, DType::kF32, Device::kCUDA);
    cuda_vae_write_frames(dx, C, -1.0f, 1.0f, video, f0);
    auto v = host_f32(video);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t p = 0; p < H * W; ++p) {
          const float got = v[size_t((c * F + f) * H * W + p)];
          if (f < f0 || f >= f0 + T)
            ASSERT_EQ(got, 0.0f);
          else
            ASSERT_EQ(got, std::clamp(x[size_t(((f - f0) * H * W + p) * Cx + c)], -1.0f, 1.0f));
        }
  }
}

// ---------------------------------------------------------------------------------------------
// Conv

struct ConvCase {
  int64_t N, Cin, Ti, Hi, Wi, Cout, kt, kh, kw;
  kern::Conv3dPad pad;
  bool cudnn_must;  // bf16 must run on cuDNN when it is built (the decoder's production shapes)
};

std::string conv_name(const ConvCase& c) {
  return fmt::format("N{} Cin{} T{} {}x{} Cout{} k{}x{}x{} pad{},{},{},{}", c.N, c.Cin, c.Ti, c.Hi, c.Wi, c.Cout, c.kt,
                     c.kh, c.kw, c.pad.top, c.pad.bottom, c.pad.left, c.pad.right);
}

// Runs one case on one backend; returns false (after printing why) when cuDNN declined it.
bool run_conv(const ConvCase& c, DType dt, kern::ConvBackend backend, bool with_bias) {
  SCOPED_TRACE(::testing::Message() << conv_name(c) << " " << dtype_name(dt) << " "
                                    << kern::conv_backend_name(backend) << " bias=" << with_bias);
  const int64_t taps = c.kt * c.kh * c.kw;
  auto x = inputs(size_t(c.N * c.Cin * c.Ti * c.Hi * c.Wi), 81, dt);  // [N, Cin, Ti, Hi, Wi]
  auto w = inputs(size_t(c.Cout * c.Cin * taps), 82, dt);              // [Cout, Cin, taps]
  auto b = random_vec(size_t(c.Cout), 83);
  // Reference over [prev, x] with the first kt − 1 frames as the causal cache `prev`.
  const int64_t Tp = c.kt - 1, Tx = c.Ti - Tp, HW = c.Hi * c.Wi;
  std::vector<float> prev(size_t(c.N * c.Cin * Tp * HW)), rest(size_t(c.N * c.Cin * Tx * HW));
  for (int64_t nc = 0; nc < c.N * c.Cin; ++nc) {
    std::copy_n(x.begin() + nc * c.Ti * HW, Tp * HW, prev.begin() + nc * Tp * HW);
    std::copy_n(x.begin() + (nc * c.Ti + Tp) * HW, Tx * HW, rest.begin() + nc * Tx * HW);
  }
  const int64_t To = c.Ti - c.kt + 1, Ho = c.Hi + c.pad.top + c.pad.bottom - c.kh + 1;
  const int64_t Wo = c.Wi + c.pad.left + c.pad.right - c.kw + 1;
  std::vector<float> ref(size_t(c.N * c.Cout * To * Ho * Wo));
  kern::conv3d_ref(rest.data(), w.data(), with_bias ? b.data() : nullptr, ref.data(), c.N, c.Cin, Tx, c.Hi, c.Wi,
                   c.Cout, c.kt, c.kh, c.kw, c.pad, Tp > 0 ? prev.data() : nullptr, Tp);
  // Channels-last operands.
  std::vector<float> x_cl(x.size()), w_cl(w.size()), ref_cl(ref.size());
  for (int64_t n = 0; n < c.N; ++n) {
    const auto xn = transpose(std::vector<float>(x.begin() + n * c.Cin * c.Ti * HW, x.begin() + (n + 1) * c.Cin * c.Ti * HW),
                              c.Cin, c.Ti * HW);
    std::copy(xn.begin(), xn.end(), x_cl.begin() + n * c.Cin * c.Ti * HW);
    const int64_t on = c.Cout * To * Ho * Wo;
    const auto rn = transpose(std::vector<float>(ref.begin() + n * on, ref.begin() + (n + 1) * on), c.Cout, To * Ho * Wo);
    std::copy(rn.begin(), rn.end(), ref_cl.begin() + n * on);
  }
  for (int64_t co = 0; co < c.Cout; ++co) {
    const auto wc = transpose(std::vector<float>(w.begin() + co * c.Cin * taps, w.begin() + (co + 1) * c.Cin * taps),
                              c.Cin, taps);
    std::copy(wc.begin(), wc.end(), w_cl.begin() + co * c.Cin * taps);
  }
  Tensor dx = device_tensor(x_cl, {int64_t(x_cl.size())}, dt), dw = device_tensor(w_cl, {int64_t(w_cl.size())}, dt);
  Tensor db = device_tensor(b, {c.Cout}, DType::kF32);
  Tensor dy = Tensor::empty({int64_t(ref.size())}, dt, Device::kCUDA);
  kern::Conv3dArgs a;
  a.x = dx.raw(), a.w = dw.raw(), a.bias = with_bias ? db.f32() : nullptr, a.y = dy.raw(), a.type = ft(dt);
  a.N = c.N, a.Cin = c.Cin, a.Ti = c.Ti, a.Hi = c.Hi, a.Wi = c.Wi, a.Cout = c.Cout, a.kt = c.kt, a.kh = c.kh, a.kw = c.kw;
  a.pad = c.pad;
  kern::ConvBackend chosen{};
  size_t ws = 0;
  const cudaError_t pe = kern::conv3d_prepare(a, backend, &chosen, &ws);
  if (backend == kern::ConvBackend::kCudnn && pe == cudaErrorNotSupported) {
    std::cout << "[vae conv] cuDNN declined " << conv_name(c) << " " << dtype_name(dt) << ": "
              << kern::conv3d_last_error() << "\n";
    return false;
  }
  EXPECT_EQ(pe, cudaSuccess) << kern::conv3d_last_error();
  if (pe != cudaSuccess) return false;
  if (backend != kern::ConvBackend::kAuto) {
    EXPECT_EQ(chosen, backend);
  }
  Tensor work = Tensor::empty({int64_t(ws) + 1}, DType::kU8, Device::kCUDA);
  EXPECT_EQ(kern::conv3d_forward(a, chosen, work.raw(), ws, compute_stream()), cudaSuccess) << kern::conv3d_last_error();
  const double err = rel_l2(host_f32(dy), ref_cl);
  EXPECT_LE(err, dt == DType::kF32 ? 1e-5 : 5e-3);
  return true;
}

const ConvCase kConvCases[] = {
    {1, 5, 4, 6, 7, 7, 3, 3, 3, {1, 1, 1, 1}, false},     // odd channels, 2 output frames
    {1, 16, 3, 9, 11, 24, 3, 3, 3, {1, 1, 1, 1}, true},   // the decoder's 3×3×3 causal conv (cache + 1 frame)
    {1, 16, 4, 5, 6, 32, 3, 1, 1, {0, 0, 0, 0}, true},    // time_conv
    {1, 24, 2, 7, 5, 8, 1, 3, 3, {1, 1, 1, 1}, true},     // resample (2-D per frame)
    {2, 8, 3, 4, 5, 16, 1, 1, 1, {0, 0, 0, 0}, false},    // pointwise, N = 2
    {1, 8, 3, 6, 5, 8, 3, 3, 3, {0, 2, 1, 0}, false},     // asymmetric padding
    {1, 16, 3, 8, 10, 8, 3, 3, 3, {1, 1, 0, 0}, true},    // halo-extended input (parallel VAE, width split)
    {1, 3, 3, 4, 4, 3, 3, 3, 3, {1, 1, 1, 1}, false},     // tiny channels
};

TEST(VaeConvGpu, GemmFallbackMatchesRef) {
  VGEN_REQUIRE_GPU();
  for (const ConvCase& c : kConvCases)
    for (DType dt : {DType::kF32, DType::kBF16})
      for (bool bias : {true, false}) run_conv(c, dt, kern::ConvBackend::kGemm, bias);
}

TEST(VaeConvGpu, CudnnMatchesRefWhereItServes) {
  VGEN_REQUIRE_GPU();
  if (!kern::conv3d_cudnn_built()) {
    // Not a skip: this build has only the fallback, and kAuto must resolve to it.
    std::cout << "[vae conv] this build has no cuDNN conv path\n";
    for (const ConvCase& c : kConvCases) EXPECT_TRUE(run_conv(c, DType::kBF16, kern::ConvBackend::kAuto, true));
    return;
  }
  int served = 0;
  for (const ConvCase& c : kConvCases)
    for (DType dt : {DType::kF32, DType::kBF16})
      for (bool bias : {true, false}) {
        const bool ok = run_conv(c, dt, kern::ConvBackend::kCudnn, bias);
        served += ok;
        if (c.cudnn_must && dt == DType::kBF16) {
          EXPECT_TRUE(ok) << "cuDNN must serve the decoder's bf16 shape " << conv_name(c);
        }
        EXPECT_TRUE(run_conv(c, dt, kern::ConvBackend::kAuto, bias));
      }
  const kern::Conv3dStats s = kern::conv3d_stats();
  std::cout << "[vae conv] cuDNN served " << served << " of " << 4 * std::size(kConvCases) << " cases; plans "
            << s.cudnn_plans << ", rejected shapes " << s.cudnn_rejected << ", unfused bias " << s.cudnn_unfused_bias
            << "\n";
}

TEST(VaeConvGpu, RejectsBadArguments) {
  VGEN_REQUIRE_GPU();
  kern::Conv3dArgs a;
  a.Cin = 4, a.Cout = 4, a.Ti = 2, a.Hi = 2, a.Wi = 2, a.kt = 3, a.kh = 3, a.kw = 3;  // Ti < kt
  kern::ConvBackend chosen{};
  size_t ws = 0;
  EXPECT_EQ(kern::conv3d_prepare(a, kern::ConvBackend::kAuto, &chosen, &ws), cudaErrorInvalidValue);
  a.Ti = 3;
  a.pad.top = -1;
  EXPECT_EQ(kern::conv3d_prepare(a, kern::ConvBackend::kGemm, &chosen, &ws), cudaErrorInvalidValue);
}

TEST(VaeConvGpu, TensorWrapperAndBackendSwitch) {
  VGEN_REQUIRE_GPU();
  const int64_t T = 3, H = 5, W = 6, Cin = 8, Cout = 16;
  auto x = random_vec(size_t(T * H * W * Cin), 91), w = random_vec(size_t(Cout * 27 * Cin), 92);
  auto b = random_vec(size_t(Cout), 93);
  Tensor dx = device_tensor(x, {T, H, W, Cin}, DType::kF32), dw = device_tensor(w, {Cout, 3, 3, 3, Cin}, DType::kF32);
  Tensor db = device_tensor(b, {Cout}, DType::kF32);
  const VaeConvCounts c0 = vae_conv_counts();
  Tensor y1 = cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, VaeConvPolicy{VaeConvBackend::kGemm, false});
  EXPECT_EQ(vae_conv_counts().gemm, c0.gemm + 1);
  Tensor y2 = cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, VaeConvPolicy{});
  ASSERT_EQ(y1.shape(), (Shape{1, H, W, Cout}));
  EXPECT_LE(rel_l2(host_f32(y2), host_f32(y1)), 1e-5);
  // Autotuning picks among cuDNN's plans of the same conv (auto: the fallback without cuDNN).
  Tensor y3 = cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, VaeConvPolicy{VaeConvBackend::kAuto, true});
  EXPECT_LE(rel_l2(host_f32(y3), host_f32(y1)), 1e-5);
  EXPECT_THROW(cuda_vae_conv3d(dx, dw.reshape({Cout, 27, 1, 1, Cin}), db, {}, VaeConvPolicy{}),
               Error);  // kt = 27 > T
}

// A residual added by the conv (cuDNN's epilogue, or after the GEMM fallback) equals the conv plus
// the residual added after it: f32 to rounding, bf16 within one bf16 rounding of the sum; the
// pointer ranges are untouched.
TEST(VaeConvGpu, ResidualInTheEpilogue) {
  VGEN_REQUIRE_GPU();
  const int64_t H = 7, W = 10, Cin = 16, Cout = 24;
  for (DType dt : {DType::kF32, DType::kBF16})
    for (VaeConvBackend be : {VaeConvBackend::kAuto, VaeConvBackend::kGemm}) {
      const auto x = maybe_round(random_vec(size_t(3 * H * W * Cin), 94), dt);
      const auto w = maybe_round(random_vec(size_t(Cout * 27 * Cin), 95), dt);
      const auto res = maybe_round(random_vec(size_t(H * W * Cout), 96, -4.0f, 4.0f), dt);
      Tensor dx = device_tensor(x, {3, H, W, Cin}, dt), dw = device_tensor(w, {Cout, 3, 3, 3, Cin}, dt);
      Tensor db = device_tensor(random_vec(size_t(Cout), 97), {Cout}, DType::kF32);
      Tensor dr = device_tensor(res, {1, H, W, Cout}, dt);
      const VaeConvPolicy pol{be, false};
      Tensor plain = cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, pol);  // [1, H, W, Cout]
      Tensor fused = cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, pol, &dr);
      std::vector<float> want = host_f32(plain);
      for (size_t i = 0; i < want.size(); ++i) want[i] += res[i];
      EXPECT_LE(rel_l2(host_f32(fused), want), dt == DType::kF32 ? 1e-6 : 4e-3)
          << dtype_name(dt) << " " << (be == VaeConvBackend::kGemm ? "gemm" : "auto");
      EXPECT_EQ(host_f32(dr), res);
      EXPECT_THROW(cuda_vae_conv3d(dx, dw, db, {1, 1, 1, 1}, pol, &dx), Error);  // not the output's shape
    }
}

// ---------------------------------------------------------------------------------------------
// Attention

TEST(VaeAttnGpu, MatchesAttentionRef) {
  VGEN_REQUIRE_GPU();
  struct Case { int64_t Sq, Skv, D, block_rows; };
  for (const Case c : {Case{37, 53, 40, 0}, Case{37, 53, 40, 8}, Case{100, 100, 384, 33}, Case{1, 7, 3, 0},
                       Case{64, 129, 16, 64}})
    for (DType dt : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(::testing::Message() << "Sq=" << c.Sq << " Skv=" << c.Skv << " D=" << c.D << " block=" << c.block_rows
                                        << " " << dtype_name(dt));
      // q from a fused [Sq, 3D] buffer, k/v from a fused [Skv, 3D] one (as in the decoder).
      auto qb = inputs(size_t(c.Sq * 3 * c.D), 101, dt, -2.0f, 2.0f), kvb = inputs(size_t(c.Skv * 3 * c.D), 102, dt, -2.0f, 2.0f);
      std::vector<float> q(size_t(c.Sq * c.D)), k(size_t(c.Skv * c.D)), v(size_t(c.Skv * c.D));
      for (int64_t i = 0; i < c.Sq; ++i)
        for (int64_t d = 0; d < c.D; ++d) q[size_t(i * c.D + d)] = qb[size_t(i * 3 * c.D + d)];
      for (int64_t j = 0; j < c.Skv; ++j)
        for (int64_t d = 0; d < c.D; ++d) {
          k[size_t(j * c.D + d)] = kvb[size_t(j * 3 * c.D + c.D + d)];
          v[size_t(j * c.D + d)] = kvb[size_t(j * 3 * c.D + 2 * c.D + d)];
        }
      const float scale = 1.0f / std::sqrt(float(c.D));
      std::vector<float> ref(q.size());
      kern::attention_ref(q.data(), k.data(), v.data(), ref.data(), nullptr, 1, c.Sq, c.Skv, 1, c.D, c.Skv, scale);
      Tensor dq = device_tensor(qb, {c.Sq, 3 * c.D}, dt), dkv = device_tensor(kvb, {c.Skv, 3 * c.D}, dt);
      Tensor out = Tensor::empty({c.Sq, c.D}, dt, Device::kCUDA);
      kern::VaeAttnArgs a;
      a.q = dq.raw();
      a.k = static_cast<const char*>(dkv.raw()) + size_t(c.D) * dtype_size(dt);
      a.v = static_cast<const char*>(dkv.raw()) + size_t(2 * c.D) * dtype_size(dt);
      a.out = out.raw();
      a.ldq = a.ldk = a.ldv = 3 * c.D;
      a.Sq = c.Sq, a.Skv = c.Skv, a.D = c.D, a.scale = scale, a.type = ft(dt), a.block_rows = c.block_rows;
      const size_t ws = kern::vae_attention_workspace(a);
      Tensor work = Tensor::empty({int64_t(ws)}, DType::kU8, Device::kCUDA);
      ASSERT_EQ(kern::vae_attention(a, work.raw(), ws, compute_stream()), cudaSuccess) << kern::vae_attention_last_error();
      EXPECT_LE(rel_l2(host_f32(out), ref), dt == DType::kF32 ? 1e-5 : 1.5e-2);
      if (c.block_rows == 0 && c.Sq == c.Skv) {
        // Tensor-level wrapper (same fused buffer for queries and keys).
        Tensor o2 = cuda_vae_frame_attention(dq, dq, c.D);
        std::vector<float> k2(q.size()), v2(q.size()), ref2(q.size());
        for (int64_t j = 0; j < c.Sq; ++j)
          for (int64_t d = 0; d < c.D; ++d) {
            k2[size_t(j * c.D + d)] = qb[size_t(j * 3 * c.D + c.D + d)];
            v2[size_t(j * c.D + d)] = qb[size_t(j * 3 * c.D + 2 * c.D + d)];
          }
        kern::attention_ref(q.data(), k2.data(), v2.data(), ref2.data(), nullptr, 1, c.Sq, c.Sq, 1, c.D, c.Sq, scale);
        EXPECT_LE(rel_l2(host_f32(o2), ref2), dt == DType::kF32 ? 1e-5 : 1.5e-2);
      }
    }
}

TEST(VaeAttnGpu, SoftmaxRows) {
  VGEN_REQUIRE_GPU();
  const int64_t rows = 5, n = 1031;
  auto s = random_vec(size_t(rows * n), 111, -20.0f, 20.0f);
  Tensor ds = device_tensor(s, {rows, n}, DType::kF32);
  Tensor dp = Tensor::empty({rows, n}, DType::kF32, Device::kCUDA);
  ASSERT_EQ(kern::vae_softmax_rows(ds.f32(), dp.raw(), kern::FloatType::kF32, rows, n, compute_stream()), cudaSuccess);
  auto p = host_f32(dp);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, sum = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, double(s[size_t(r * n + j)]));
    for (int64_t j = 0; j < n; ++j) sum += std::exp(double(s[size_t(r * n + j)]) - m);
    for (int64_t j = 0; j < n; ++j)
      ASSERT_NEAR(p[size_t(r * n + j)], std::exp(double(s[size_t(r * n + j)]) - m) / sum, 1e-6);
  }
}

}  // namespace

#else
VGEN_GPU_TESTS_NEED_CUDA(VaeKernelsGpu)
#endif
