// The block-scaled formats on the host (label unit): UE8M0 and E2M1 codes, MXFP8 and NVFP4
// quantise → dequantise on hand-made blocks (exact values, subnormals, saturation, zeros, NaN and
// Inf as blockscale's headers define them), error bounds on random data, and cuBLASLt's 128×4
// scale-factor layout (the offset of (row, k-block), its inverse, the swizzle round trip).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "kernels/blockscale/blockscale_format.h"
#include "kernels/blockscale/mxfp8_ref.h"
#include "kernels/blockscale/nvfp4_ref.h"
#include "kernels/quant/fp8_e4m3_ref.h"

using namespace vgen::kern;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> mx_round_trip(const std::vector<float>& x, int64_t rows, int64_t K, std::vector<uint8_t>* sc = nullptr) {
  std::vector<uint8_t> q(size_t(rows * K)), s(size_t(rows * mxfp8_kblocks(K)));
  mxfp8_quantize_ref(x.data(), rows, K, K, q.data(), s.data());
  std::vector<float> y(x.size());
  mxfp8_dequantize_ref(q.data(), s.data(), rows, K, y.data());
  if (sc) *sc = s;
  return y;
}

std::vector<float> fp4_round_trip(const std::vector<float>& x, int64_t rows, int64_t K, float S,
                                  std::vector<uint8_t>* sc = nullptr) {
  std::vector<uint8_t> q(size_t(rows * nvfp4_row_bytes(K))), s(size_t(rows * nvfp4_kblocks(K)));
  nvfp4_quantize_ref(x.data(), rows, K, K, S, q.data(), s.data());
  std::vector<float> y(x.size());
  nvfp4_dequantize_ref(q.data(), s.data(), S, rows, K, y.data());
  if (sc) *sc = s;
  return y;
}

}  // namespace

TEST(BlockScaleFormat, Ue8m0) {
  EXPECT_EQ(ue8m0_decode(127), 1.0f);
  EXPECT_EQ(ue8m0_decode(130), 8.0f);
  EXPECT_EQ(ue8m0_decode(254), std::ldexp(1.0f, 127));
  EXPECT_EQ(ue8m0_decode(1), std::ldexp(1.0f, -126));
  EXPECT_EQ(ue8m0_decode(0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(ue8m0_decode(0xFF)));
  EXPECT_EQ(bs_floor_log2(1.0f), 0);
  EXPECT_EQ(bs_floor_log2(1.99f), 0);
  EXPECT_EQ(bs_floor_log2(0.3f), -2);
  EXPECT_EQ(bs_floor_log2(std::ldexp(1.0f, -149)), -149);     // the smallest subnormal
  EXPECT_EQ(bs_floor_log2(std::ldexp(3.0f, -140)), -139);     // a subnormal
  EXPECT_EQ(mxfp8_scale_exp(448.0f), 0);
  EXPECT_EQ(mxfp8_scale_exp(0.0f), -127);
  EXPECT_EQ(mxfp8_scale_exp(std::ldexp(1.0f, -130)), -127);  // clamped
}

TEST(BlockScaleFormat, E4m3DecodeMatchesTheReference) {
  for (int b = 0; b < 256; ++b) {
    const float a = e4m3_decode_hd(uint8_t(b)), r = fp8_e4m3_decode(uint8_t(b));
    if (std::isnan(r)) EXPECT_TRUE(std::isnan(a)) << b;
    else EXPECT_EQ(std::memcmp(&a, &r, 4), 0) << b << ": " << a << " vs " << r;
  }
}

TEST(BlockScaleFormat, E2m1EveryCodeAndRounding) {
  const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int c = 0; c < 16; ++c) {
    const float v = (c & 8 ? -1.0f : 1.0f) * grid[c & 7];
    EXPECT_EQ(e2m1_decode(uint8_t(c)), v) << c;
    EXPECT_EQ(e2m1_encode(v), c) << v;
  }
  EXPECT_EQ(e2m1_encode(-0.0f), 0x8);
  // Ties go to the even code; just off a tie goes to the nearer value.
  const float ties[][2] = {{0.25f, 0.0f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f},
                           {2.5f, 2.0f},  {3.5f, 4.0f},  {5.0f, 4.0f}};
  for (const auto& t : ties) {
    EXPECT_EQ(e2m1_decode(e2m1_encode(t[0])), t[1]) << t[0];
    EXPECT_EQ(e2m1_decode(e2m1_encode(-t[0])), -t[1]) << -t[0];
    EXPECT_EQ(e2m1_decode(e2m1_encode(std::nextafter(t[0], 0.0f))), e2m1_decode(e2m1_encode(t[0] * 0.99f)));
  }
  EXPECT_EQ(e2m1_decode(e2m1_encode(0.26f)), 0.5f);
  EXPECT_EQ(e2m1_decode(e2m1_encode(5.01f)), 6.0f);
  EXPECT_EQ(e2m1_encode(7.0f), 0x7);  // saturation
  EXPECT_EQ(e2m1_encode(-1e30f), 0xF);
  EXPECT_EQ(e2m1_encode(kInf), 0x7);
  EXPECT_EQ(e2m1_encode(kNaN), 0x0);
}

TEST(Mxfp8Ref, HandMadeBlocks) {
  // Block 0: (1 + (k%7)/8)·2^(k/8 − 2) → amax 3.5, X = 2^(1−8), every value exact (3.5·128 = 448).
  // Block 1: amax 1.99 → X = 2^-8: 1.99·256 = 509.4 saturates to 448 (reads 1.75), 1 reads 1.
  // Block 2: zeros. Block 3: a NaN → the whole block NaN. Block 4: an Inf, likewise.
  // Block 5: amax 1 with tiny elements: 2^-18·256 = 2^-10 ties to 0; 1.5·2^-18 → 2^-9 (reads 2^-17).
  // Block 6: a float subnormal amax 2^-130: X clamps to 2^-127, 2^-130·2^127 = 1/8 is exact.
  const int64_t K = 7 * 32;
  std::vector<float> x(K, 0.0f);
  for (int k = 0; k < 32; ++k) x[k] = std::ldexp(1.0f + float(k % 7) / 8.0f, k / 8 - 2) * (k % 2 ? -1.0f : 1.0f);
  x[32] = 1.99f, x[33] = -1.0f, x[34] = 0.3f;
  x[3 * 32 + 5] = kNaN, x[3 * 32 + 6] = 2.0f;
  x[4 * 32 + 31] = -kInf;
  x[5 * 32] = 1.0f, x[5 * 32 + 1] = std::ldexp(1.0f, -18), x[5 * 32 + 2] = std::ldexp(1.5f, -18);
  x[6 * 32] = std::ldexp(1.0f, -130), x[6 * 32 + 1] = -std::ldexp(1.0f, -133);
  std::vector<uint8_t> s;
  const std::vector<float> y = mx_round_trip(x, 1, K, &s);
  EXPECT_EQ(s[0], 127 - 7);
  for (int k = 0; k < 32; ++k) EXPECT_EQ(y[k], x[k]) << k;
  EXPECT_EQ(s[1], 127 - 8);
  EXPECT_EQ(y[32], 1.75f);
  EXPECT_EQ(y[33], -1.0f);
  EXPECT_EQ(y[34], fp8_e4m3_round(0.3f * 256.0f) / 256.0f);
  EXPECT_EQ(s[2], 0);
  for (int k = 64; k < 96; ++k) EXPECT_EQ(y[k], 0.0f);
  EXPECT_EQ(s[3], kUe8m0Nan);
  EXPECT_EQ(s[4], kUe8m0Nan);
  for (int k = 96; k < 160; ++k) EXPECT_TRUE(std::isnan(y[k])) << k;
  EXPECT_EQ(s[5], 127 - 8);
  EXPECT_EQ(y[161], 0.0f);
  EXPECT_EQ(y[162], std::ldexp(1.0f, -17));
  EXPECT_EQ(s[6], 0);
  EXPECT_EQ(y[192], std::ldexp(1.0f, -130));
  EXPECT_EQ(y[193], -std::ldexp(1.0f, -133));
}

TEST(Mxfp8Ref, ShortLastBlockAndRows) {
  // K = 40: blocks of 32 and 8; rows are independent.
  const int64_t rows = 3, K = 40;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = float((i % 17) - 8) * (i / K + 1);
  x[1 * K + 35] = 1000.0f;  // the second row's short block: X = 2^(9−8) = 2
  std::vector<uint8_t> s;
  const std::vector<float> y = mx_round_trip(x, rows, K, &s);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[3], 127 + 1);
  EXPECT_EQ(y[1 * K + 35], 896.0f);  // 1000/2 = 500 saturates to 448
  EXPECT_EQ(y[1 * K + 36], x[1 * K + 36]);
  EXPECT_EQ(s[0], 127 + 3 - 8);  // row 0's first block: amax 8
}

TEST(Mxfp8Ref, RandomErrorBound) {
  // Each value within half an e4m3 step of its binade (2^-4 relative), or 2^-10·X below e4m3's
  // normals, except those the spec's scale pushes past 448·X, which saturate.
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const int64_t rows = 16, K = 256;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = n(rng) * std::exp(float(i % 7) - 3.0f);
  std::vector<uint8_t> s;
  const std::vector<float> y = mx_round_trip(x, rows, K, &s);
  double se = 0, sx = 0;
  for (int64_t i = 0; i < rows * K; ++i) {
    const float X = ue8m0_decode(s[(i / K) * (K / 32) + (i % K) / 32]);
    const float err = std::fabs(y[i] - x[i]);
    if (std::fabs(x[i]) > 448.0f * X) {
      EXPECT_EQ(std::fabs(y[i]), 448.0f * X) << i;
    } else {
      EXPECT_LE(err, std::max(std::fabs(x[i]) * 0.0625f, X * std::ldexp(1.0f, -10))) << i;
    }
    se += double(err) * err, sx += double(x[i]) * x[i];
  }
  EXPECT_LT(std::sqrt(se / sx), 0.05);
}

TEST(Mxfp8Ref, FakeQuantIsTheRoundTrip) {
  const int64_t rows = 5, K = 72;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = std::sin(float(i)) * float(1 + i % 9);
  const std::vector<float> y = mx_round_trip(x, rows, K);
  mxfp8_fake_quant_ref(x.data(), rows, K);
  for (int64_t i = 0; i < rows * K; ++i) EXPECT_EQ(x[i], y[i]) << i;
}

TEST(Nvfp4Ref, TensorScale) {
  EXPECT_EQ(nvfp4_tensor_scale(2688.0f), 1.0f);
  EXPECT_EQ(nvfp4_tensor_scale(1.0f), 2688.0f);
  EXPECT_EQ(nvfp4_tensor_scale(0.0f), 1.0f);
  EXPECT_EQ(nvfp4_tensor_scale(kInf), 1.0f);
  EXPECT_EQ(nvfp4_tensor_scale(1e-35f), 1.0f);
  const float x[] = {1.0f, -3.0f, kNaN, -kInf, 2.0f};
  EXPECT_EQ(finite_amax_ref(x, 5), 3.0f);
}

TEST(Nvfp4Ref, HandMadeBlocks) {
  // S = 1. Block 0: the E2M1 grid itself with amax 6 → scale e4m3(1) = 0x38, every value exact.
  // Block 1: amax 12 → scale 2: 12 and 5 (→ 2.5 ties to 2 → reads 4) and 0.7 (→ 0.35 → 0.5 → reads 1).
  // Block 2: zeros → scale 0. Block 3: a NaN → NaN scale, the block reads NaN.
  // Block 4: amax 0.03 → scale e4m3(0.005) = 0.005859375 (subnormal 3·2^-9): 0.03 · S/s = 5.12 → 6
  //          → reads 0.03515625 (the scale's rounding shows).
  const int64_t K = 80;
  std::vector<float> x(K, 0.0f);
  const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int k = 0; k < 16; ++k) x[k] = (k & 8 ? -1.0f : 1.0f) * grid[k & 7];
  x[16] = 12.0f, x[17] = 5.0f, x[18] = -0.7f;
  x[50] = kNaN;
  x[64] = 0.03f;
  std::vector<uint8_t> s;
  const std::vector<float> y = fp4_round_trip(x, 1, K, 1.0f, &s);
  EXPECT_EQ(s[0], 0x38);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(y[k], x[k]) << k;
  EXPECT_EQ(fp8_e4m3_decode(s[1]), 2.0f);
  EXPECT_EQ(y[16], 12.0f);
  EXPECT_EQ(y[17], 4.0f);
  EXPECT_EQ(y[18], -1.0f);
  EXPECT_EQ(s[2], 0);
  for (int k = 32; k < 48; ++k) EXPECT_EQ(y[k], 0.0f);
  EXPECT_EQ(s[3], 0x7F);
  for (int k = 48; k < 64; ++k) EXPECT_TRUE(std::isnan(y[k])) << k;
  EXPECT_EQ(fp8_e4m3_decode(s[4]), 3.0f * std::ldexp(1.0f, -9));
  EXPECT_EQ(y[64], 6.0f * 3.0f * std::ldexp(1.0f, -9));
}

TEST(Nvfp4Ref, TwoLevelScalingAndPacking) {
  // With S from the tensor, the largest block's scale is exactly 448 and its amax reads back exactly;
  // an odd K packs the last element alone in the low nibble.
  const int64_t rows = 2, K = 19;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = float(i % 5) - 2.0f;
  x[K + 3] = 300.0f;
  const float S = nvfp4_tensor_scale(finite_amax_ref(x.data(), rows * K));
  std::vector<uint8_t> q(rows * nvfp4_row_bytes(K)), s(rows * nvfp4_kblocks(K));
  nvfp4_quantize_ref(x.data(), rows, K, K, S, q.data(), s.data());
  EXPECT_EQ(fp8_e4m3_decode(s[2]), 448.0f);
  EXPECT_EQ(q.size(), 20u);
  EXPECT_EQ(q[9] >> 4, 0);  // the pad nibble of row 0
  EXPECT_EQ(q[1] & 0xF, e2m1_encode(x[2] * (S / fp8_e4m3_decode(s[0]))));
  EXPECT_EQ(q[1] >> 4, e2m1_encode(x[3] * (S / fp8_e4m3_decode(s[0]))));
  std::vector<float> y(x.size());
  nvfp4_dequantize_ref(q.data(), s.data(), S, rows, K, y.data());
  EXPECT_FLOAT_EQ(y[K + 3], 300.0f);
}

TEST(Nvfp4Ref, RandomErrorBound) {
  // Per element: within a quarter of its block's amax (E2M1's widest step, 4 → 6, is a third of
  // the top; the e4m3 scale adds 2^-4); in all, a few percent of the data's RMS would mean a
  // broken quantiser (measured 0.083 here for Gaussian data).
  std::mt19937 rng(11);
  std::normal_distribution<float> n(0.0f, 1.0f);
  const int64_t rows = 32, K = 512;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = n(rng) * std::exp(float((i / 16) % 5) - 2.0f);
  const float S = nvfp4_tensor_scale(finite_amax_ref(x.data(), rows * K));
  const std::vector<float> y = fp4_round_trip(x, rows, K, S);
  double se = 0, sx = 0;
  for (int64_t b = 0; b < rows * K / 16; ++b) {
    const float amax = finite_amax_ref(x.data() + b * 16, 16);
    for (int64_t i = b * 16; i < b * 16 + 16; ++i) {
      const float err = std::fabs(y[i] - x[i]);
      EXPECT_LE(err, 0.25f * amax + 1e-30f) << i;
      se += double(err) * err, sx += double(x[i]) * x[i];
    }
  }
  const double rel = std::sqrt(se / sx);
  std::printf("[nvfp4 random] relative RMS error %.4f\n", rel);
  EXPECT_LT(rel, 0.12);
  EXPECT_GT(rel, 0.01);  // not a pass-through
}

TEST(Nvfp4Ref, RowsEmulationIsPerRow) {
  // The activation emulation scales each row on its own: a row reads back the same alone or
  // among others.
  const int64_t rows = 4, K = 48;
  std::vector<float> x(rows * K);
  for (int64_t i = 0; i < rows * K; ++i) x[i] = std::cos(float(i) * 0.37f) * std::pow(10.0f, float(i / K) - 1.0f);
  std::vector<float> all = x, one(x.begin() + 2 * K, x.begin() + 3 * K);
  nvfp4_fake_quant_rows_ref(all.data(), rows, K);
  nvfp4_fake_quant_rows_ref(one.data(), 1, K);
  for (int64_t k = 0; k < K; ++k) EXPECT_EQ(all[2 * K + k], one[k]) << k;
  std::vector<float> whole = x;
  nvfp4_fake_quant_ref(whole.data(), rows, K);
  bool differs = false;
  for (int64_t i = 0; i < rows * K; ++i) differs |= whole[i] != all[i];
  EXPECT_TRUE(differs);  // the tensor-wide scale is another quantisation
}

TEST(ScaleLayout, OffsetsOfCublasLtTiles) {
  // One 128×4 tile: rows 0..31 are 16 bytes apart, each group of 32 rows 4 bytes further, blocks
  // adjacent; tiles row-major over (row/128, kb/4).
  EXPECT_EQ(bs_scale_offset(0, 0, 4), 0);
  EXPECT_EQ(bs_scale_offset(0, 3, 4), 3);
  EXPECT_EQ(bs_scale_offset(1, 0, 4), 16);
  EXPECT_EQ(bs_scale_offset(31, 0, 4), 31 * 16);
  EXPECT_EQ(bs_scale_offset(32, 0, 4), 4);
  EXPECT_EQ(bs_scale_offset(127, 3, 4), 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(bs_scale_offset(128, 0, 4), 512);
  EXPECT_EQ(bs_scale_offset(0, 4, 10), 512);             // 10 blocks pad to 12: 3 tiles a tile row
  EXPECT_EQ(bs_scale_offset(128, 0, 10), 3 * 512);
  EXPECT_EQ(bs_scale_offset(200, 9, 10), 5 * 512 + (200 % 32) * 16 + 2 * 4 + 1);
  EXPECT_EQ(bs_scales_bytes(200, 10), 256 * 12);
  EXPECT_EQ(bs_scales_bytes(1, 1), 512);
}

TEST(ScaleLayout, InverseAndBijection) {
  for (int64_t kblocks : {1, 4, 7, 12}) {
    const int64_t rows = 300, bytes = bs_scales_bytes(rows, kblocks);
    std::set<int64_t> seen;
    for (int64_t r = 0; r < bs_padded_rows(rows); ++r)
      for (int64_t b = 0; b < bs_padded_kblocks(kblocks); ++b) {
        const int64_t off = bs_scale_offset(r, b, kblocks);
        ASSERT_GE(off, 0);
        ASSERT_LT(off, bytes);
        seen.insert(off);
        int64_t r2, b2;
        bs_scale_position(off, kblocks, &r2, &b2);
        ASSERT_EQ(r2, r);
        ASSERT_EQ(b2, b);
      }
    EXPECT_EQ(int64_t(seen.size()), bytes) << kblocks;
  }
}

TEST(ScaleLayout, SwizzleRoundTrip) {
  const int64_t rows = 130, kblocks = 5;
  std::vector<uint8_t> plain(rows * kblocks), sw(bs_scales_bytes(rows, kblocks)), back(plain.size());
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = uint8_t(1 + i % 251);
  swizzle_scales_ref(plain.data(), rows, kblocks, sw.data());
  unswizzle_scales_ref(sw.data(), rows, kblocks, back.data());
  EXPECT_EQ(back, plain);
  int64_t pads = 0;
  for (uint8_t v : sw) pads += v == 0;
  EXPECT_EQ(pads, int64_t(sw.size()) - rows * kblocks);  // the padding is zeros
  EXPECT_EQ(sw[16], plain[1 * kblocks]);                 // row 1, block 0
  EXPECT_EQ(sw[4], plain[32 * kblocks]);                 // row 32, block 0
}
