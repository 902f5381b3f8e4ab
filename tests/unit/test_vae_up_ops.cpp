// Wan 2.2 VAE ops on the host (ops/vae_up_ops.h) against plain loops written from diffusers'
// tensor recipes: DupUp3D (repeat_interleave, view, permute, first_chunk crop) added phase by
// phase, and unpatchify + clamp into a frame range of a video; the Wan 2.2 VAE config.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "model/wan/vae/vae_config.h"
#include "ops/vae_up_ops.h"

using namespace vgen;

namespace {

Tensor rand_tensor(const Shape& s, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(size_t(shape_numel(s)));
  for (auto& x : v) x = d(g);
  return Tensor::from_vector(v, s);
}

// DupUp3D.forward of x [Cin, T, H, W] → [Cout, T·ft, fs·H, fs·W], step by step as diffusers writes it.
std::vector<float> dup_up_loops(const Tensor& x, int64_t Cout, int64_t ft, int64_t fs) {
  const int64_t Cin = x.dim(0), T = x.dim(1), H = x.dim(2), W = x.dim(3), r = Cout * ft * fs * fs / Cin;
  // repeat_interleave(r, dim=1): channel k of the result is channel k / r of x.
  const int64_t Cr = Cin * r;
  std::vector<float> rep(size_t(Cr * T * H * W));
  for (int64_t k = 0; k < Cr; ++k)
    for (int64_t i = 0; i < T * H * W; ++i) rep[size_t(k * T * H * W + i)] = x.f32()[(k / r) * T * H * W + i];
  // view [Cout, ft, fs, fs, T, H, W], permute (0, 4, 1, 5, 2, 6, 3) → [Cout, T, ft, H, fs, W, fs].
  std::vector<float> out(rep.size());
  for (int64_t o = 0; o < Cout; ++o)
    for (int64_t a = 0; a < ft; ++a)
      for (int64_t b = 0; b < fs; ++b)
        for (int64_t d = 0; d < fs; ++d)
          for (int64_t t = 0; t < T; ++t)
            for (int64_t h = 0; h < H; ++h)
              for (int64_t w = 0; w < W; ++w) {
                const int64_t src = (((((o * ft + a) * fs + b) * fs + d) * T + t) * H + h) * W + w;
                const int64_t dst = (((((o * T + t) * ft + a) * H + h) * fs + b) * W + w) * fs + d;
                out[size_t(dst)] = rep[size_t(src)];
              }
  return out;
}

}  // namespace

TEST(VaeUpOps, DupUpAddMatchesDiffusersLoops) {
  struct Case { int64_t Cin, Cout, Cy, T, H, W, ft; };
  // (Cin = Cout, ft 2): the temporal residual blocks; (Cin = 2·Cout, ft 1): the spatial one; odd
  // sizes; Cy > Cout: padding channels left alone.
  for (const Case c : {Case{4, 4, 4, 1, 3, 5, 2}, Case{6, 3, 3, 2, 2, 3, 1}, Case{8, 4, 6, 1, 1, 1, 2},
                       Case{3, 6, 6, 2, 3, 2, 2}, Case{5, 5, 8, 1, 4, 3, 1}}) {
    const int64_t fs = 2;
    Tensor x = rand_tensor({c.Cin, c.T, c.H, c.W}, 11);
    const std::vector<float> full = dup_up_loops(x, c.Cout, c.ft, fs);  // [Cout, T·ft, 2H, 2W]
    const int64_t Ho = fs * c.H, Wo = fs * c.W, plane = Ho * Wo;
    for (int64_t phase = 0; phase < c.ft; ++phase) {
      Tensor base = rand_tensor({c.Cy, c.T, Ho, Wo}, 12), y = base.clone();
      vae_dup_up_add_(y, x, c.Cout, c.ft, fs, phase);
      for (int64_t o = 0; o < c.Cy; ++o)
        for (int64_t t = 0; t < c.T; ++t)
          for (int64_t i = 0; i < plane; ++i) {
            const int64_t at = (o * c.T + t) * plane + i;
            const float add = o < c.Cout ? full[size_t((o * c.T * c.ft + t * c.ft + phase) * plane + i)] : 0.0f;
            ASSERT_EQ(y.f32()[at], base.f32()[at] + add) << "Cin " << c.Cin << " phase " << phase << " o " << o;
          }
    }
  }
  // first_chunk keeps the last time phase: one frame of DupUp3D(x)[:, :, ft - 1:] for a 1-frame x.
  Tensor x = rand_tensor({4, 1, 2, 2}, 13);
  const std::vector<float> full = dup_up_loops(x, 4, 2, 2);  // [4, 2, 4, 4]
  Tensor y = Tensor::zeros({4, 1, 4, 4}, DType::kF32);
  vae_dup_up_add_(y, x, 4, 2, 2, 1);
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t i = 0; i < 16; ++i) ASSERT_EQ(y.f32()[o * 16 + i], full[size_t((o * 2 + 1) * 16 + i)]);
}

TEST(VaeUpOps, UnpatchifyWriterMatchesDiffusersLoops) {
  for (const int64_t p : {1, 2, 3}) {
    const int64_t C = 3, Cx = C * p * p + 2, T = 2, H = 3, W = 4, F = 5, f0 = 2;  // Cx: 2 padding channels
    Tensor x = rand_tensor({Cx, T, H, W}, 21);
    Tensor video = Tensor::zeros({C, F, p * H, p * W}, DType::kF32);
    vae_write_frames_unpatchify(x, C, p, -0.7f, 0.7f, video, f0);
    // unpatchify: view [C, p(q), p(r), T, H, W], permute (0, 3, 4, 2, 5, 1) → [C, T, H, r, W, q].
    for (int64_t c = 0; c < C; ++c)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t r = 0; r < p; ++r)
            for (int64_t w = 0; w < W; ++w)
              for (int64_t q = 0; q < p; ++q) {
                const float got = video.f32()[((c * F + f) * p * H + h * p + r) * p * W + w * p + q];
                float want = 0.0f;
                if (f >= f0 && f < f0 + T)
                  want = std::clamp(x.f32()[((((c * p + q) * p + r) * T + f - f0) * H + h) * W + w], -0.7f, 0.7f);
                ASSERT_EQ(got, want) << "p " << p << " c " << c << " f " << f;
              }
  }
}

TEST(VaeUpOps, Wan22Config) {
  const WanVaeConfig c =
      load_wan_vae_config(std::string(VGEN_SOURCE_DIR) + "/tests/golden-i2v/wan22-ti2v-tiny/vae");
  EXPECT_TRUE(c.is_residual);
  EXPECT_EQ(c.patch(), 2);
  EXPECT_EQ(c.z_dim, 48);
  EXPECT_EQ(c.decoder_dims(), (std::vector<int>{24, 24, 24, 24, 12}));
  EXPECT_EQ(c.spatial_upscale(), 8);
  EXPECT_EQ(c.video_upscale(), 16);
  EXPECT_EQ(c.video_channels(), 3);
  EXPECT_EQ(c.output_frames(3), 9);
  // The residual blocks take the previous block's full width; their upsamplers keep it.
  EXPECT_EQ(c.up_block_in(1), 24);
  EXPECT_EQ(c.upsampler_out(0), 24);
  const WanVaeConfig w21 = parse_wan_vae_config(Json::object(), "test");
  EXPECT_EQ(w21.patch(), 1);
  EXPECT_EQ(w21.video_upscale(), 8);
  EXPECT_EQ(w21.up_block_in(1), 192);
  EXPECT_EQ(w21.upsampler_out(0), 192);
}

TEST(VaeUpOps, Wan22ConfigRejections) {
  auto refused = [](const Json& j, const std::string& key) {
    try {
      parse_wan_vae_config(j, "cfg.json");
      ADD_FAILURE() << j.dump() << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kModel);
      EXPECT_NE(e.message().find(key), std::string::npos) << e.message();
    }
  };
  // patch_size 2 makes the video 16× the latents: scale_factor_spatial must say so.
  refused(Json{{"patch_size", 2}, {"out_channels", 12}}, "scale_factor_spatial");
  // The unpatchified channels: out_channels a multiple of patch_size².
  refused(Json{{"patch_size", 2}, {"scale_factor_spatial", 16}, {"out_channels", 3}}, "out_channels");
  refused(Json{{"patch_size", -1}}, "patch_size");
  // DupUp3D of a residual block: out · factor_t · 4 must be a multiple of in (block 1: 3 → 1 wide).
  refused(Json{{"is_residual", true}, {"base_dim", 1}, {"dim_mult", {1, 1, 3}}, {"temperal_downsample", {false, false}},
               {"scale_factor_spatial", 4}, {"scale_factor_temporal", 1}},
          "DupUp3D");
  const WanVaeConfig ok = parse_wan_vae_config(
      Json{{"is_residual", true}, {"patch_size", 2}, {"out_channels", 12}, {"scale_factor_spatial", 16}}, "cfg.json");
  EXPECT_EQ(ok.video_channels(), 3);
}
