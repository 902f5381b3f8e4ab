// VAE op family: conv3d (fast path vs naive loops on odd shapes and paddings), channel RMS norm,
// nearest ×2 upsampling, time interleave, causal conv with the temporal cache vs one whole-clip conv.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/conv3d/conv3d_ref.h"
#include "kernels/vae_norm/vae_norm_ref.h"
#include "kernels/vae_ops/vae_ops_ref.h"
#include "model/wan/vae/vae_config.h"
#include "model/wan/vae/vae_layers.h"
#include "ops/vae_ops.h"
#include "ops/vae_subpixel_ops.h"

using namespace vgen;

namespace {
std::vector<float> randn(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
double rel_l2(const float* a, const float* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    num += double(a[i] - b[i]) * double(a[i] - b[i]);
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}
Tensor rand_tensor(const Shape& s, uint32_t seed) { return Tensor::from_vector(randn(size_t(shape_numel(s)), seed), s); }
}  // namespace

struct ConvCase {
  int64_t N, Cin, Ti, Hi, Wi, Cout, kt, kh, kw;
  kern::Conv3dPad pad;
};

TEST(VaeOps, Conv3dMatchesNaiveLoops) {
  const ConvCase cases[] = {
      {1, 3, 3, 5, 7, 4, 3, 3, 3, {1, 1, 1, 1}},     // causal 3×3×3 'same' on odd sizes
      {2, 5, 4, 6, 3, 7, 3, 3, 3, {1, 1, 1, 1}},     // batch 2, T_out 2
      {1, 4, 3, 5, 6, 6, 3, 1, 1, {0, 0, 0, 0}},     // time_conv 3×1×1
      {1, 6, 2, 4, 5, 3, 1, 1, 1, {0, 0, 0, 0}},     // 1×1×1 (direct path)
      {1, 3, 1, 9, 11, 5, 1, 3, 3, {1, 1, 1, 1}},    // Conv2d 3×3 as one frame
      {1, 3, 3, 5, 4, 2, 3, 3, 3, {1, 1, 0, 1}},     // halo-extended left side (no left pad)
      {1, 2, 3, 4, 5, 3, 3, 3, 3, {0, 1, 1, 0}},     // height split: no top pad; no right pad
      {1, 2, 3, 1, 1, 3, 3, 3, 3, {1, 1, 1, 1}},     // 1×1 frame
      {1, 7, 3, 3, 2000, 5, 3, 3, 3, {1, 1, 1, 1}},  // wide rows: several row blocks
      {1, 3, 3, 300, 40, 4, 3, 3, 3, {1, 1, 1, 1}},  // tall: row blocks with a remainder
  };
  uint32_t seed = 1;
  for (const auto& c : cases) {
    const int64_t To = c.Ti - c.kt + 1, Ho = c.Hi + c.pad.top + c.pad.bottom - c.kh + 1;
    const int64_t Wo = c.Wi + c.pad.left + c.pad.right - c.kw + 1;
    auto x = randn(size_t(c.N * c.Cin * c.Ti * c.Hi * c.Wi), seed++);
    auto w = randn(size_t(c.Cout * c.Cin * c.kt * c.kh * c.kw), seed++);
    auto b = randn(size_t(c.Cout), seed++);
    std::vector<float> y(size_t(c.N * c.Cout * To * Ho * Wo), -7.f), yr(y.size(), 7.f);
    kern::conv3d_ref(x.data(), w.data(), b.data(), y.data(), c.N, c.Cin, c.Ti, c.Hi, c.Wi, c.Cout, c.kt, c.kh, c.kw,
                     c.pad);
    kern::conv3d_naive_ref(x.data(), w.data(), b.data(), yr.data(), c.N, c.Cin, c.Ti, c.Hi, c.Wi, c.Cout, c.kt, c.kh,
                           c.kw, c.pad);
    EXPECT_LT(rel_l2(y.data(), yr.data(), y.size()), 1e-6)
        << "Cin " << c.Cin << " T " << c.Ti << " H " << c.Hi << " W " << c.Wi << " k " << c.kt << c.kh << c.kw;
  }
}

// The conv over [prev, x] (cache frames passed separately) equals the conv over the concatenation.
TEST(VaeOps, Conv3dWithPreviousFrames) {
  const int64_t N = 2, Cin = 3, Tp = 2, Tx = 3, H = 5, W = 4, Cout = 4;
  for (int64_t kw : {1, 3}) {
    const int64_t kh = kw, kt = 3;
    const kern::Conv3dPad pad = kw == 3 ? kern::Conv3dPad{1, 1, 0, 1} : kern::Conv3dPad{};
    auto prev = randn(size_t(N * Cin * Tp * H * W), 51), x = randn(size_t(N * Cin * Tx * H * W), 52);
    auto w = randn(size_t(Cout * Cin * kt * kh * kw), 53), b = randn(size_t(Cout), 54);
    std::vector<float> cat;  // [N, Cin, Tp + Tx, H, W]
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < Cin; ++c) {
        auto p0 = prev.begin() + (n * Cin + c) * Tp * H * W, x0 = x.begin() + (n * Cin + c) * Tx * H * W;
        cat.insert(cat.end(), p0, p0 + Tp * H * W);
        cat.insert(cat.end(), x0, x0 + Tx * H * W);
      }
    const int64_t To = Tp + Tx - kt + 1, Wo = W + pad.left + pad.right - kw + 1, Ho = H + pad.top + pad.bottom - kh + 1;
    std::vector<float> y(size_t(N * Cout * To * Ho * Wo)), yr(y.size());
    kern::conv3d_ref(x.data(), w.data(), b.data(), y.data(), N, Cin, Tx, H, W, Cout, kt, kh, kw, pad, prev.data(), Tp);
    kern::conv3d_naive_ref(cat.data(), w.data(), b.data(), yr.data(), N, Cin, Tp + Tx, H, W, Cout, kt, kh, kw, pad);
    EXPECT_LT(rel_l2(y.data(), yr.data(), y.size()), 1e-6) << "kw " << kw;
  }
}

TEST(VaeOps, Conv3dNaiveSpotCheck) {
  // One hand-computed value: 1×1×3×3 input of ones, 3×3 kernel of ones, 'same' padding:
  // the corner sums 4 taps, an edge 6, the centre 9.
  std::vector<float> x(9, 1.f), w(9, 1.f), y(9);
  kern::conv3d_naive_ref(x.data(), w.data(), nullptr, y.data(), 1, 1, 1, 3, 3, 1, 1, 3, 3, {1, 1, 1, 1});
  EXPECT_EQ(y[0], 4.f);
  EXPECT_EQ(y[1], 6.f);
  EXPECT_EQ(y[4], 9.f);
  std::vector<float> y2(9);
  kern::conv3d_ref(x.data(), w.data(), nullptr, y2.data(), 1, 1, 1, 3, 3, 1, 1, 3, 3, {1, 1, 1, 1});
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(y2[size_t(i)], y[size_t(i)]);
}

TEST(VaeOps, RmsNormChannel) {
  const int64_t N = 2, C = 5, S = 301;  // S over one block boundary of the kernel
  auto x = randn(size_t(N * C * S), 11), g = randn(size_t(C), 12);
  for (size_t i = 0; i < size_t(S); ++i) x[i] = 0.f;  // an all-zero position of item 0: eps path
  for (bool silu : {false, true}) {
    std::vector<float> y(x.size());
    kern::vae_rms_norm_ref(x.data(), g.data(), y.data(), N, C, S, silu);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        double ss = 0;
        for (int64_t c = 0; c < C; ++c) ss += double(x[size_t((n * C + c) * S + s)]) * x[size_t((n * C + c) * S + s)];
        const double den = std::max(std::sqrt(ss), 1e-12);
        for (int64_t c = 0; c < C; ++c) {
          double v = x[size_t((n * C + c) * S + s)] / den * std::sqrt(double(C)) * g[size_t(c)];
          if (silu) v = v / (1 + std::exp(-v));
          ASSERT_NEAR(y[size_t((n * C + c) * S + s)], v, 1e-5 * (1 + std::fabs(v)));
        }
      }
  }
}

TEST(VaeOps, UpsampleNearest2x) {
  const int64_t P = 3, H = 5, W = 7;
  auto x = randn(size_t(P * H * W), 21);
  std::vector<float> y(size_t(P * 4 * H * W));
  kern::upsample_nearest2x_ref(x.data(), y.data(), P, H, W);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t h = 0; h < 2 * H; ++h)
      for (int64_t w = 0; w < 2 * W; ++w)
        ASSERT_EQ(y[size_t((p * 2 * H + h) * 2 * W + w)], x[size_t((p * H + h / 2) * W + w / 2)]);
}

TEST(VaeOps, TimeInterleaveAndSilu) {
  const int64_t C = 3, T = 2, S = 5;
  auto x = randn(size_t(2 * C * T * S), 31);
  std::vector<float> y(x.size());
  kern::time_interleave2_ref(x.data(), y.data(), C, T, S);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t k = 0; k < 2; ++k)
        for (int64_t s = 0; s < S; ++s)
          ASSERT_EQ(y[size_t((c * 2 * T + 2 * t + k) * S + s)], x[size_t(((k * C + c) * T + t) * S + s)]);
  std::vector<float> z(x.size());
  kern::silu_ref(x.data(), z.data(), int64_t(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(z[i], x[i] / (1 + std::exp(-x[i])), 1e-6);
}

// Chunked causal conv (1 frame per call, 2-frame cache) equals one conv over the whole clip with
// two zero frames in front: the feature-cache protocol of diffusers' _decode.
TEST(VaeOps, CausalConvCacheMatchesWholeClip) {
  const int64_t Cin = 3, Cout = 4, T = 5, H = 6, W = 5;
  VaeConvWeights conv;
  conv.cin = Cin, conv.cout = conv.cout_store = Cout, conv.kt = 3, conv.kh = 3, conv.kw = 3;
  conv.w = rand_tensor({Cout, Cin, 3, 3, 3}, 41);
  conv.b = rand_tensor({Cout}, 42);
  Tensor x = rand_tensor({Cin, T, H, W}, 43);
  Tensor padded = cat_time(Tensor::zeros({Cin, 2, H, W}, DType::kF32), x);
  Tensor whole = vae_conv3d(padded, conv.w, conv.b, {1, 1, 1, 1});  // [Cout, T, H, W]
  LocalSpatialContext ctx;
  const VaeRun run;  // the host
  auto conv_chunk = [&](const Tensor& chunk, VaeConvCache& cache) {
    return vae_conv(conv, chunk.shape(), &cache, run, ctx, [&](Tensor& d) { d.copy_from(chunk); });
  };
  VaeConvCache cache;
  for (int64_t t = 0; t < T; ++t) {
    Tensor y = conv_chunk(slice_time(x, t, 1), cache);  // [Cout, 1, H, W]
    Tensor ref = slice_time(whole, t, 1);
    EXPECT_LT(rel_l2(y.f32(), ref.f32(), size_t(y.numel())), 1e-6) << "frame " << t;
  }
  // Chunks of two frames give the same as well.
  VaeConvCache cache2;
  for (int64_t t = 0; t + 2 <= T; t += 2) {
    Tensor y = conv_chunk(slice_time(x, t, 2), cache2);
    Tensor ref = slice_time(whole, t, 2);
    EXPECT_LT(rel_l2(y.f32(), ref.f32(), size_t(y.numel())), 1e-6) << "chunk at " << t;
  }
}

// The upsampler as the decoder runs it (ops/vae_subpixel_ops.h): the sub-pixel 2×2 conv of one
// channel half of a time_conv frame, shuffled, equals nearest ×2 of the interleaved frame followed
// by the checkpoint's 3×3 conv (padding 1) — the definition, through the kernels' references.
TEST(VaeOps, SubpixelUpsamplerEqualsUpsampleThenConv) {
  const int64_t C = 3, Co = 4, H = 4, W = 5;
  Tensor tc = rand_tensor({2 * C, 1, H, W}, 51);  // a time_conv output frame
  Tensor inter = Tensor::empty({C, 2, H, W}, DType::kF32);
  kern::time_interleave2_ref(tc.f32(), inter.f32(), C, 1, H * W);
  Tensor w3 = rand_tensor({Co, C, 3, 3}, 53), b = rand_tensor({Co}, 54);
  Tensor w4 = vae_subpixel_weight(w3);  // [4·Co, C, 2, 2]
  ASSERT_EQ(w4.shape(), (Shape{4 * Co, C, 2, 2}));
  Tensor b4 = Tensor::empty({4 * Co}, DType::kF32);
  for (int64_t p = 0; p < 4; ++p) b4.narrow(p * Co, Co).copy_from(b);
  const kern::Conv3dPad pad1{1, 1, 1, 1};
  for (int64_t k = 0; k < 2; ++k) {
    Tensor lo = Tensor::empty({C, 1, H, W}, DType::kF32);
    vae_channels_into(tc, k * C, C, lo);
    Tensor got = vae_subpixel_shuffle(vae_conv3d(lo, w4, b4, pad1), Co);  // [Co, 1, 2H, 2W]
    Tensor up = Tensor::empty({C, 1, 2 * H, 2 * W}, DType::kF32);
    kern::upsample_nearest2x_ref(slice_time(inter, k, 1).f32(), up.f32(), C, H, W);
    Tensor want = vae_conv3d(up, w3, b, pad1);  // [Co, 1, 2H, 2W]
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_LT(rel_l2(got.f32(), want.f32(), size_t(got.numel())), 1e-6) << "half " << k;
  }
}

// The output writer equals clamp, then copy into the video.
TEST(VaeOps, FrameWriter) {
  const int64_t C = 3, H = 4, W = 5;
  Tensor y = rand_tensor({C, 2, H, W}, 52);  // two output frames
  Tensor video = Tensor::zeros({C, 5, H, W}, DType::kF32);
  vae_write_frames(y, C, -0.5f, 0.5f, video, 3);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t f = 0; f < 5; ++f)
      for (int64_t p = 0; p < H * W; ++p) {
        const float v = video.f32()[(c * 5 + f) * H * W + p];
        const float want = f < 3 ? 0.0f : std::clamp(y.f32()[(c * 2 + f - 3) * H * W + p], -0.5f, 0.5f);
        ASSERT_EQ(v, want) << c << " " << f << " " << p;
      }
}

TEST(VaeConfig, DefaultsAndRejections) {
  WanVaeConfig c = parse_wan_vae_config(Json::object(), "test");
  EXPECT_EQ(c.base_dim, 96);
  EXPECT_EQ(c.decoder_base_dim, 96);
  EXPECT_EQ(c.z_dim, 16);
  EXPECT_EQ(c.decoder_dims(), (std::vector<int>{384, 384, 384, 192, 96}));
  EXPECT_EQ(c.output_frames(21), 81);
  EXPECT_EQ(c.spatial_upscale(), 8);
  EXPECT_EQ(c.latents_mean.size(), 16u);
  EXPECT_FLOAT_EQ(c.latents_std[15], 1.916f);
  Json j = {{"base_dim", 8}, {"dim_mult", {1, 2, 2, 2}}, {"num_res_blocks", 1}, {"decoder_base_dim", nullptr}};
  c = parse_wan_vae_config(j, "test");
  EXPECT_EQ(c.decoder_dims(), (std::vector<int>{16, 16, 16, 16, 8}));
  // Wan 2.2: residual blocks and a 2×2 patch, which scales by 16 (test_vae_up_ops.cpp has the
  // decoder's cases).
  c = parse_wan_vae_config(
      Json{{"is_residual", true}, {"patch_size", 2}, {"scale_factor_spatial", 16}, {"out_channels", 12}}, "cfg.json");
  EXPECT_TRUE(c.is_residual);
  EXPECT_EQ(c.patch_size, 2);
  try {
    parse_wan_vae_config(Json{{"patch_size", 2}, {"out_channels", 12}}, "cfg.json");
    FAIL() << "patch_size 2 with scale_factor_spatial 8 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel);
    EXPECT_NE(e.message().find("patch_size"), std::string::npos);
  }
  EXPECT_THROW(parse_wan_vae_config(Json{{"z_dim", "x"}}, "cfg.json"), Error);
  EXPECT_THROW(parse_wan_vae_config(Json{{"scale_factor_spatial", 16}}, "cfg.json"), Error);
  EXPECT_THROW(parse_wan_vae_config(Json{{"temperal_downsample", {false, false, true}}}, "cfg.json"), Error);
  EXPECT_THROW(parse_wan_vae_config(Json{{"temperal_downsample", {true}}}, "cfg.json"), Error);
}
