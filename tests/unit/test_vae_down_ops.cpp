// The Wan VAE encoder's down-direction ops (ops/vae_down_ops.h) on the host against straightforward
// loops: the strided conv (the downsamplers' padded stride-2 Conv2d and stride-2 time_conv, odd
// sizes), patchify and AvgDown3D against a literal transcription of diffusers' view / permute /
// mean, the frame helpers; the encoder's config helpers, vae_normalize, its input checks, and the
// split encode's context on one rank against the local encode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/vae_down/vae_down_ref.h"
#include "model/wan/vae/vae_decoder.h"
#include "model/wan/vae/vae_encoder_parallel.h"
#include "ops/vae_down_ops.h"

using namespace vgen;

namespace {

Tensor rand_tensor(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(size_t(shape_numel(s)));
  for (auto& x : v) x = d(g);
  return Tensor::from_vector(v, s);
}

double rel_l2(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double num = 0, den = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i) {
    num += double(a.f32()[i] - b.f32()[i]) * double(a.f32()[i] - b.f32()[i]);
    den += double(b.f32()[i]) * double(b.f32()[i]);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

// A contiguous tensor of extents `dims` permuted as torch's x.permute(perm).contiguous().
std::vector<float> permute(const std::vector<float>& x, const std::vector<int64_t>& dims,
                           const std::vector<int>& perm) {
  const size_t n = dims.size();
  std::vector<int64_t> stride(n, 1), out_dims(n);
  for (size_t i = n - 1; i > 0; --i) stride[i - 1] = stride[i] * dims[i];
  for (size_t i = 0; i < n; ++i) out_dims[i] = dims[size_t(perm[i])];
  std::vector<float> y(x.size());
  std::vector<int64_t> idx(n, 0);
  for (size_t o = 0; o < y.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < n; ++i) src += idx[i] * stride[size_t(perm[i])];
    y[o] = x[size_t(src)];
    for (size_t i = n; i-- > 0;) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  return y;
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.f32(), t.f32() + t.numel()); }

// Seven loops of a strided conv over [Cin, T, H, W] (spatial zero padding, no temporal padding).
Tensor naive_strided_conv(const Tensor& x, const Tensor& w5, const Tensor& b, const kern::Conv3dPad& pad, int64_t st,
                          int64_t ss) {
  const int64_t Cin = x.dim(0), T = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Cout = w5.dim(0), kt = w5.dim(2), kh = w5.dim(3), kw = w5.dim(4);
  const int64_t To = (T - kt) / st + 1, Ho = (H + pad.top + pad.bottom - kh) / ss + 1;
  const int64_t Wo = (W + pad.left + pad.right - kw) / ss + 1;
  Tensor y = Tensor::empty({Cout, To, Ho, Wo}, DType::kF32);
  for (int64_t co = 0; co < Cout; ++co)
    for (int64_t to = 0; to < To; ++to)
      for (int64_t ho = 0; ho < Ho; ++ho)
        for (int64_t wo = 0; wo < Wo; ++wo) {
          double acc = b.f32()[co];
          for (int64_t ci = 0; ci < Cin; ++ci)
            for (int64_t a = 0; a < kt; ++a)
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j) {
                  const int64_t hi = ho * ss + i - pad.top, wi = wo * ss + j - pad.left;
                  if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                  acc += double(x.f32()[((ci * T + to * st + a) * H + hi) * W + wi]) *
                         double(w5.f32()[(((co * Cin + ci) * kt + a) * kh + i) * kw + j]);
                }
          y.f32()[((co * To + to) * Ho + ho) * Wo + wo] = float(acc);
        }
  return y;
}

VaeConvWeights host_conv(int64_t cout, int64_t cin, int64_t kt, int64_t kh, int64_t kw, uint32_t seed) {
  VaeConvWeights c;
  c.cin = cin, c.cout = c.cout_store = cout, c.kt = kt == 0 ? 1 : kt, c.kh = kh, c.kw = kw;
  c.w = kt == 0 ? rand_tensor({cout, cin, kh, kw}, seed) : rand_tensor({cout, cin, kt, kh, kw}, seed);
  c.b = rand_tensor({cout}, seed + 1);
  return c;
}

}  // namespace

TEST(VaeDownOps, DownsampleConvMatchesLoops) {
  // ZeroPad2d((0, 1, 0, 1)) + 3×3 stride-2 Conv2d per frame, even and odd frame sizes.
  for (auto [T, H, W] : {std::tuple<int64_t, int64_t, int64_t>{1, 8, 12}, {4, 7, 9}, {2, 2, 2}, {3, 5, 16}}) {
    SCOPED_TRACE(::testing::Message() << T << "x" << H << "x" << W);
    const VaeConvWeights c = host_conv(6, 5, 0, 3, 3, 3);
    const Tensor x = rand_tensor({5, T, H, W}, 7);
    const Tensor y = vae_strided_conv(c, x, {0, 1, 0, 1}, 1, 2);
    ASSERT_EQ(y.shape(), (Shape{6, T, H / 2, W / 2}));
    EXPECT_LE(rel_l2(y, naive_strided_conv(x, c.w.reshape({6, 5, 1, 3, 3}), c.b, {0, 1, 0, 1}, 1, 2)), 1e-6);
  }
}

TEST(VaeDownOps, TimeConvStrideTwoMatchesLoops) {
  // (3, 1, 1) stride 2 over [cached frame, chunk]: 5 frames → 2, 3 → 1.
  for (int64_t T : {5, 3, 6}) {
    const VaeConvWeights c = host_conv(4, 4, 3, 1, 1, 11);
    const Tensor x = rand_tensor({4, T, 3, 5}, 13);
    const Tensor y = vae_strided_conv(c, x, {}, 2, 1);
    ASSERT_EQ(y.dim(1), (T - 3) / 2 + 1);
    EXPECT_LE(rel_l2(y, naive_strided_conv(x, c.w, c.b, {}, 2, 1)), 1e-6);
  }
}

TEST(VaeDownOps, GeneralStridesAndPaddingMatchLoops) {
  const VaeConvWeights c = host_conv(3, 2, 3, 3, 3, 17);
  const Tensor x = rand_tensor({2, 7, 9, 10}, 19);
  for (auto [st, ss] : {std::pair<int64_t, int64_t>{1, 1}, {2, 2}, {3, 2}, {1, 3}}) {
    const kern::Conv3dPad pad{1, 0, 2, 1};
    EXPECT_LE(rel_l2(vae_strided_conv(c, x, pad, st, ss), naive_strided_conv(x, c.w, c.b, pad, st, ss)), 1e-6)
        << st << " " << ss;
  }
  // Stride 1 agrees with the decoder's stride-1 conv.
  EXPECT_LE(rel_l2(vae_strided_conv(c, x, {1, 1, 1, 1}, 1, 1), vae_conv3d(x, c.w, c.b, {1, 1, 1, 1})), 1e-6);
}

TEST(VaeDownOps, PatchifyIsDiffusersViewPermute) {
  const int64_t C = 3, T = 2, H = 6, W = 8, p = 2;
  const Tensor x = rand_tensor({C, T, H, W}, 23);
  // diffusers: view [C, T, H/p, p, W/p, p] (batch dropped), permute(0, 5, 3, 1, 2, 4) → [C, q, r, T, h, w].
  const std::vector<float> want = permute(values(x), {C, T, H / p, p, W / p, p}, {0, 5, 3, 1, 2, 4});
  Tensor y = Tensor::empty({C * p * p, T, H / p, W / p}, DType::kF32);
  vae_patchify_into(x, p, y);
  EXPECT_EQ(values(y), want);
  Tensor same = Tensor::empty({C, T, H, W}, DType::kF32);
  vae_patchify_into(x, 1, same);
  EXPECT_EQ(values(same), values(x));
}

TEST(VaeDownOps, AvgDownIsDiffusersViewPermuteMean) {
  struct Case { int64_t Cin, T, H, W, Cout, ft, fs; };
  for (const Case c : {Case{8, 4, 6, 4, 16, 2, 2}, Case{8, 1, 6, 4, 16, 2, 2}, Case{8, 3, 4, 4, 8, 1, 2},
                       Case{4, 2, 2, 2, 4, 1, 1}, Case{6, 5, 2, 4, 4, 2, 2}}) {
    SCOPED_TRACE(::testing::Message() << c.Cin << " " << c.T << " " << c.Cout << " " << c.ft << " " << c.fs);
    const Tensor x = rand_tensor({c.Cin, c.T, c.H, c.W}, 29);
    // F.pad with pad_t zero frames in front, view [C, T'/ft, ft, H/fs, fs, W/fs, fs],
    // permute(0, 2, 4, 6, 1, 3, 5), view [Cout, g, T', h, w], mean over g.
    const int64_t pad_t = (c.ft - c.T % c.ft) % c.ft, Tp = c.T + pad_t, To = Tp / c.ft;
    const int64_t h = c.H / c.fs, w = c.W / c.fs, S = To * h * w;
    std::vector<float> padded(size_t(c.Cin * Tp * c.H * c.W), 0.0f);
    for (int64_t ch = 0; ch < c.Cin; ++ch)
      std::copy_n(x.f32() + ch * c.T * c.H * c.W, c.T * c.H * c.W, padded.begin() + (ch * Tp + pad_t) * c.H * c.W);
    const std::vector<float> v = permute(padded, {c.Cin, To, c.ft, h, c.fs, w, c.fs}, {0, 2, 4, 6, 1, 3, 5});
    const int64_t g = c.Cin * c.ft * c.fs * c.fs / c.Cout;
    Tensor base = rand_tensor({c.Cout, To, h, w}, 31), y = base.clone();
    vae_avg_down_add_(y, x, c.ft, c.fs);
    for (int64_t o = 0; o < c.Cout; ++o)
      for (int64_t s = 0; s < S; ++s) {
        double mean = 0;
        for (int64_t j = 0; j < g; ++j) mean += v[size_t((o * g + j) * S + s)];
        EXPECT_NEAR(y.f32()[o * S + s], base.f32()[o * S + s] + mean / double(g), 1e-5) << o << " " << s;
      }
  }
}

TEST(VaeDownOps, VideoFramesAndCatFrames) {
  const Tensor v = rand_tensor({3, 9, 4, 5}, 37);
  const Tensor f = vae_video_frames(v, 5, 4);
  EXPECT_EQ(values(f), values(slice_time(v, 5, 4)));
  const Tensor a = rand_tensor({3, 1, 4, 5}, 41);
  EXPECT_EQ(values(vae_cat_frames(a, f)), values(cat_time(a, f)));
}

TEST(VaeEncoderConfig, FactorsFramesAndNormalize) {
  WanVaeConfig c = parse_wan_vae_config(Json::object(), "test");
  EXPECT_EQ(vae_encoder_spatial_factor(c), 8);
  EXPECT_EQ(vae_encoder_latent_frames(c, 81), 21);
  EXPECT_EQ(vae_encoder_latent_frames(c, 1), 1);
  c = parse_wan_vae_config(
      Json{{"is_residual", true}, {"patch_size", 2}, {"scale_factor_spatial", 16}, {"out_channels", 12}}, "test");
  EXPECT_EQ(vae_encoder_spatial_factor(c), 16);
  // vae_normalize is the inverse of vae_denormalize (within an ulp or two).
  WanVaeConfig d = parse_wan_vae_config(Json::object(), "test");
  const Tensor z = rand_tensor({2, 16, 2, 3, 3}, 43);
  const Tensor n = vae_normalize(z, d);
  EXPECT_LE(rel_l2(vae_denormalize(n, d), z), 1e-6);
  // Channel 1: (x − mean) · (1 / std) with 1 / std rounded to f32 first.
  const float inv = 1.0f / d.latents_std[1];
  EXPECT_EQ(n.f32()[1 * 18 + 4], (z.f32()[1 * 18 + 4] - d.latents_mean[1]) * inv);
}

TEST(VaeEncoder, ModeLogvarAndInputChecksOnTheTinyVae) {
  const std::string dir = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan21-i2v-tiny/vae";
  const WanVaeEncoder enc = WanVaeEncoder::load(dir);
  const Tensor video = rand_tensor({1, 3, 5, 16, 24}, 47);
  const Tensor m = enc.encode_moments(video);  // [1, 32, 2, 2, 3]
  ASSERT_EQ(m.shape(), (Shape{1, 32, 2, 2, 3}));
  const Tensor mode = enc.encode_mode(video);
  ASSERT_EQ(mode.shape(), (Shape{1, 16, 2, 2, 3}));
  EXPECT_EQ(values(mode), std::vector<float>(m.f32(), m.f32() + mode.numel()));
  const Tensor lv = vae_posterior_logvar(m);
  EXPECT_EQ(values(lv), std::vector<float>(m.f32() + mode.numel(), m.f32() + m.numel()));
  // The first latent frame sees the first video frame alone (causal).
  Tensor other = video.clone();
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 16 * 24; i < 5 * 16 * 24; ++i) other.f32()[c * 5 * 16 * 24 + i] = 0.5f;
  const Tensor m2 = enc.encode_moments(other);
  for (int64_t c = 0; c < 32; ++c)
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(m2.f32()[c * 12 + i], m.f32()[c * 12 + i]);
  // 4 frames, a height not a multiple of 8, 4 channels, no batch dim.
  for (const Shape& bad :
       {Shape{1, 3, 4, 16, 24}, Shape{1, 3, 5, 12, 24}, Shape{1, 4, 5, 16, 24}, Shape{3, 5, 16, 24}}) {
    try {
      enc.encode_moments(Tensor::zeros(bad, DType::kF32));
      ADD_FAILURE() << "accepted " << shape_str(bad);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInput);
    }
  }
}

TEST(VaeEncoder, HaloContextOnOneRankEqualsLocal) {
  // One rank: every halo and the stride-2 conv's extra row/col are materialised zeros.
  auto self = make_self_communicator();
  for (const char* model : {"wan21-i2v-tiny", "wan22-ti2v-tiny"}) {
    const WanVaeEncoder enc = WanVaeEncoder::load(std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/" + model + "/vae");
    const int64_t s = vae_encoder_spatial_factor(enc.config());
    const Tensor video = rand_tensor({1, 3, 5, 2 * s, 3 * s}, 53);
    const Tensor local = enc.encode_moments(video);
    for (VaeSplitDim d : {VaeSplitDim::kWidth, VaeSplitDim::kHeight})
      EXPECT_LE(rel_l2(parallel_vae_encode(enc, video, *self, d), local), 1e-6) << model;
    EXPECT_FALSE(vae_group_encode(enc, video, nullptr, VaeSplitDim::kWidth).defined());
  }
}

TEST(VaeEncoder, HeadersOnlyWalkChecksEveryTensor) {
  // The preflight-style walk of the encoder's layout: every tensor of the fixtures is found; the
  // Wan 2.1 layout against the Wan 2.2 checkpoint is refused (kModel) on a missing tensor.
  const std::string root = std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/";
  for (const char* model : {"wan21-i2v-tiny", "wan22-ti2v-tiny"}) {
    const std::string dir = root + model + "/vae";
    const WeightStore ws = WeightStore::open(dir);
    VaeWeightSource src = VaeWeightSource::headers_only(ws);
    VaeEncoderLayers L;
    EXPECT_NO_THROW(build_vae_encoder_layers(load_wan_vae_config(dir), src, L)) << model;
  }
  WanVaeConfig wan21 = load_wan_vae_config(root + "wan21-i2v-tiny/vae");
  const WeightStore ws22 = WeightStore::open(root + "wan22-ti2v-tiny/vae");
  VaeWeightSource src = VaeWeightSource::headers_only(ws22);
  VaeEncoderLayers L;
  try {
    build_vae_encoder_layers(wan21, src, L);
    ADD_FAILURE() << "the Wan 2.1 layout was accepted for the Wan 2.2 checkpoint";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kModel) << e.message();
  }
}
