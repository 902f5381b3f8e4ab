// FP8 e4m3 on the host (label unit): fp8_e4m3_encode/decode against the format's definition (all
// 256 codes, round to nearest even at every binade incl. subnormals, saturation, NaN), the per-row
// quantisation quantize_rows_fp8_ref against a direct per-element use of fp8_e4m3_ref.h (odd shapes,
// strides, bf16 input, zero / NaN / Inf / tiny rows), and the FP8 linear references.
// NaN and Inf (as quant_ref.h states): NaN elements do not count in a row's max and are stored 0x7F;
// a row holding ±Inf has max Inf, so its scale is 1 and its elements are encoded unscaled (±Inf and
// anything beyond ±448 saturate to ±448); an all-zero row has scale 1 and zero bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/common/bf16.h"
#include "kernels/gemm/gemm_fp8_ref.h"
#include "kernels/gemm/gemm_ref.h"
#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/quant_ref.h"

using namespace vgen::kern;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The value of code c by the e4m3 definition: sign bit 7, exponent bits 6..3 (bias 7), mantissa
// bits 2..0; exponent 0 is subnormal (m/8 · 2^-6); S.1111.111 is NaN (no infinities).
double e4m3_value(int c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return std::nan("");
  const double mag = e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
  return s ? -mag : mag;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Nearest positive finite code to |x| by exhaustive search, ties to the even code; beyond 448 the
// largest finite code (satfinite). Sign from x.
uint8_t nearest_code(float x) {
  const double a = std::fabs(double(x));
  int best = 0x7E;
  if (a < 448.0) {
    double best_d = INFINITY;
    for (int c = 0; c <= 0x7E; ++c) {
      const double d = std::fabs(a - e4m3_value(c));
      if (d < best_d || (d == best_d && c % 2 == 0)) best_d = d, best = c;
    }
  }
  return uint8_t((std::signbit(x) ? 0x80 : 0) | best);
}

}  // namespace

TEST(Fp8E4m3, DecodeEveryCodeByDefinition) {
  for (int c = 0; c < 256; ++c) {
    const double want = e4m3_value(c);
    const float got = fp8_e4m3_decode(uint8_t(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << c;
      continue;
    }
    EXPECT_EQ(bits(got), bits(float(want))) << "code " << c << ": " << got << " vs " << want;  // incl. -0
  }
  EXPECT_EQ(fp8_e4m3_decode(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_decode(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3_decode(0x08), std::ldexp(1.0f, -6));
}

TEST(Fp8E4m3, EncodeRoundTripsEveryCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;  // NaN
    EXPECT_EQ(int(fp8_e4m3_encode(float(e4m3_value(c)))), c) << "value " << e4m3_value(c);
  }
}

TEST(Fp8E4m3, TiesToEvenAtEveryBinade) {
  // Adjacent positive finite codes c, c+1 (0..0x7E in value order): the midpoint goes to the even
  // code, one float ulp either side to the nearer code. Covers 0 | 2^-9, the subnormals, the
  // subnormal/normal boundary (7·2^-9 | 2^-6) and every normal binade up to 416 | 448.
  for (int c = 0; c < 0x7E; ++c) {
    const float lo = float(e4m3_value(c)), hi = float(e4m3_value(c + 1));
    const float mid = 0.5f * (lo + hi);  // exact: the spacing is a power of two above 2^-10
    ASSERT_EQ(double(mid), 0.5 * (double(lo) + double(hi)));
    const int even = c % 2 == 0 ? c : c + 1;
    EXPECT_EQ(int(fp8_e4m3_encode(mid)), even) << "midpoint " << mid;
    EXPECT_EQ(int(fp8_e4m3_encode(-mid)), 0x80 | even) << "midpoint " << -mid;
    EXPECT_EQ(int(fp8_e4m3_encode(std::nextafter(mid, kInf))), c + 1) << "above " << mid;
    EXPECT_EQ(int(fp8_e4m3_encode(std::nextafter(mid, 0.0f))), c) << "below " << mid;
  }
  // Below half the smallest subnormal: zero with the sign kept.
  EXPECT_EQ(fp8_e4m3_encode(std::ldexp(1.0f, -11)), 0x00);
  EXPECT_EQ(fp8_e4m3_encode(-std::ldexp(1.0f, -11)), 0x80);
  EXPECT_EQ(fp8_e4m3_encode(std::numeric_limits<float>::denorm_min()), 0x00);
  EXPECT_EQ(fp8_e4m3_encode(-0.0f), 0x80);
}

TEST(Fp8E4m3, SaturatesAndKeepsNaN) {
  // satfinite: no infinity in e4m3; beyond 448 (including 464, the midpoint to the next binade's
  // first step, and ±Inf) the result is ±448.
  for (float v : {448.0f, 449.0f, 464.0f, 465.0f, 1e6f, std::numeric_limits<float>::max(), kInf}) {
    EXPECT_EQ(fp8_e4m3_encode(v), 0x7E) << v;
    EXPECT_EQ(fp8_e4m3_encode(-v), 0xFE) << -v;
  }
  EXPECT_EQ(fp8_e4m3_encode(kNaN) & 0x7F, 0x7F);
  EXPECT_EQ(fp8_e4m3_encode(-kNaN) & 0x7F, 0x7F);
}

TEST(Fp8E4m3, EncodeMatchesNearestCodeSearch) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> expo(-13.0f, 9.5f);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    float x = std::exp2(expo(rng));
    if (i & 1) x = -x;
    ASSERT_EQ(int(fp8_e4m3_encode(x)), int(nearest_code(x))) << "x = " << x;
    ++checked;
  }
  EXPECT_EQ(checked, 200000);
}

namespace {

// The per-row rule of quant_ref.h written out with fp8_e4m3_ref.h, element by element.
void direct_quantize(const std::vector<float>& x, int64_t M, int64_t K, int64_t ldx, std::vector<uint8_t>& q,
                     std::vector<float>& s) {
  q.assign(size_t(M * K), 0);
  s.assign(size_t(M), 0.0f);
  for (int64_t m = 0; m < M; ++m) {
    float a = 0.0f;
    for (int64_t k = 0; k < K; ++k) a = std::fmax(a, std::fabs(x[size_t(m * ldx + k)]));
    const float mul = fp8_quant_mul(a);
    for (int64_t k = 0; k < K; ++k) {
      const float p = x[size_t(m * ldx + k)] * mul;
      q[size_t(m * K + k)] = std::isnan(p) ? 0x7F : fp8_e4m3_encode(p);
    }
    s[size_t(m)] = fp8_dequant_mul(a);
  }
}

// Rows with a spread of magnitudes and the special rows of the header comment; the ldx - K padding
// holds values that must not count (huge, NaN).
std::vector<float> make_rows(int64_t M, int64_t K, int64_t ldx, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(M * ldx));
  for (int64_t m = 0; m < M; ++m) {
    const float mag = std::ldexp(1.0f, int(m % 23) - 11);
    for (int64_t k = 0; k < ldx; ++k) x[size_t(m * ldx + k)] = k < K ? u(rng) * mag : (k % 2 ? 1e30f : kNaN);
    if (m % 7 == 3)
      for (int64_t k = 0; k < K; ++k) x[size_t(m * ldx + k)] = 0.0f;  // zero row
    if (m % 7 == 4) x[size_t(m * ldx + (m % K))] = kNaN;
    if (m % 7 == 5) x[size_t(m * ldx + (m % K))] = (m % 2) ? kInf : -kInf;
    if (m % 7 == 6) x[size_t(m * ldx + ((m + 1) % K))] = 3e38f;  // finite max near the mul limit
  }
  return x;
}

}  // namespace

TEST(QuantizeRowsRef, MatchesDirectPerElementEncode) {
  uint32_t seed = 1;
  for (int64_t M : {1, 3, 17, 40})
    for (int64_t K : {1, 7, 16, 33, 1000})
      for (int64_t pad : {0, 5})
        for (bool bf16 : {false, true}) {
          const int64_t ldx = K + pad;
          std::vector<float> x = make_rows(M, K, ldx, seed++);
          std::vector<uint16_t> xb(x.size());
          if (bf16) {
            for (size_t i = 0; i < x.size(); ++i) {
              xb[i] = f32_to_bf16(x[i]);
              x[i] = bf16_to_f32(xb[i]);
            }
          }
          std::vector<uint8_t> want_q, got_q(size_t(M * K), 0xAA);
          std::vector<float> want_s, got_s(size_t(M), -1.0f);
          direct_quantize(x, M, K, ldx, want_q, want_s);
          quantize_rows_fp8_ref(bf16 ? static_cast<const void*>(xb.data()) : x.data(), bf16, M, K, ldx,
                                got_q.data(), got_s.data());
          for (int64_t m = 0; m < M; ++m) {
            ASSERT_EQ(bits(got_s[size_t(m)]), bits(want_s[size_t(m)]))
                << "scale of row " << m << " M=" << M << " K=" << K << " ldx=" << ldx << " bf16=" << bf16;
            for (int64_t k = 0; k < K; ++k)
              ASSERT_EQ(int(got_q[size_t(m * K + k)]), int(want_q[size_t(m * K + k)]))
                  << "x8[" << m << "," << k << "] of x=" << x[size_t(m * ldx + k)] << " M=" << M << " K=" << K
                  << " ldx=" << ldx << " bf16=" << bf16;
          }
        }
}

TEST(QuantizeRowsRef, SpecialRows) {
  const int64_t K = 6;
  const std::vector<float> x = {
      0.0f, -0.0f, 0.0f,  0.0f, 0.0f,   0.0f,    // zeros: scale 1, bytes 0 (sign of -0 kept)
      1.0f, kNaN,  -2.0f, 0.5f, 0.25f,  2.0f,    // NaN ignored in the max (2), stored 0x7F
      kInf, 1000,  0.3f,  -kInf, -500, 0.0f,     // Inf: scale 1, unscaled encode, saturation
      3.0f, -6.0f, 1.5f,  6.0f, 0.75f, -0.001f,  // ordinary: ±max → ±448
      1e-37f, 0.0f, -1e-37f, 5e-38f, 0.0f, 0.0f,  // below kFp8MinAmax: scale 1, values stored unscaled (0)
  };
  const int64_t M = int64_t(x.size()) / K;
  std::vector<uint8_t> q(static_cast<size_t>(M * K));
  std::vector<float> s(static_cast<size_t>(M));
  quantize_rows_fp8_ref(x.data(), false, M, K, K, q.data(), s.data());
  EXPECT_EQ(s[0], 1.0f);
  for (int k = 0; k < K; ++k) EXPECT_EQ(q[size_t(k)], k == 1 ? 0x80 : 0x00) << k;
  EXPECT_EQ(s[1], 2.0f / 448.0f);
  EXPECT_EQ(q[size_t(K + 1)], 0x7F);
  EXPECT_EQ(q[size_t(K + 5)], 0x7E);
  EXPECT_EQ(q[size_t(K + 2)], 0xFE);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_EQ(q[size_t(2 * K + 0)], 0x7E);
  EXPECT_EQ(q[size_t(2 * K + 1)], 0x7E);
  EXPECT_EQ(q[size_t(2 * K + 2)], fp8_e4m3_encode(0.3f));
  EXPECT_EQ(q[size_t(2 * K + 3)], 0xFE);
  EXPECT_EQ(q[size_t(2 * K + 4)], 0xFE);
  EXPECT_EQ(s[3], 6.0f / 448.0f);
  EXPECT_EQ(q[size_t(3 * K + 1)], 0xFE);
  EXPECT_EQ(q[size_t(3 * K + 3)], 0x7E);
  EXPECT_EQ(q[size_t(3 * K + 0)], fp8_e4m3_encode(3.0f * (448.0f / 6.0f)));
  EXPECT_EQ(fp8_quant_mul(1e-37f), 1.0f);  // 448/1e-37 would overflow to Inf (and 0 · Inf is NaN)
  EXPECT_EQ(s[4], 1.0f);
  for (int64_t k = 0; k < K; ++k) EXPECT_EQ(q[size_t(4 * K + k)] & 0x7F, 0) << "tiny value " << k << " stored as 0";
}

TEST(QuantizeRowsRef, DequantisedRowsAreClose) {
  // |decode(x8)·scale − x| ≤ 2^-4·|x| (3 mantissa bits) for normals, and ≤ scale·2^-10 (half the
  // smallest subnormal step) for the small elements of a row.
  const int64_t M = 9, K = 257;
  std::vector<float> x = make_rows(M, K, K, 99);
  for (auto& v : x)
    if (!std::isfinite(v) || std::fabs(v) > 1e29f) v = 0.5f;
  std::vector<uint8_t> q(static_cast<size_t>(M * K));
  std::vector<float> s(static_cast<size_t>(M));
  quantize_rows_fp8_ref(x.data(), false, M, K, K, q.data(), s.data());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k) {
      const double v = x[size_t(m * K + k)], d = double(fp8_e4m3_decode(q[size_t(m * K + k)])) * s[size_t(m)];
      EXPECT_LE(std::fabs(d - v), std::ldexp(std::fabs(v), -4) + s[size_t(m)] * std::ldexp(1.0, -10) * 1.0001)
          << m << "," << k;
    }
}

// INT8 rows: each element rint(x · 127/amax) clamped to ±127 (NaN 0), scale amax/127 (int8_ref.h).
TEST(QuantizeRowsInt8Ref, SpecialAndOrdinaryRows) {
  const int64_t K = 6;
  const std::vector<float> x = {
      0.0f,   -0.0f, 0.0f,   0.0f,   0.0f,   0.0f,    // zeros: scale 1, bytes 0
      1.0f,   kNaN,  -2.0f,  0.5f,   0.25f,  2.0f,    // NaN ignored in the max (2), stored 0
      kInf,   1000,  0.3f,   -kInf,  -500,   0.0f,    // Inf: scale 1, unscaled, saturated to ±127
      3.0f,   -6.0f, 1.5f,   6.0f,   0.75f,  -0.001f, // ordinary: ±max → ±127
      1e-37f, 0.0f,  -1e-37f, 5e-38f, 0.0f,  0.0f,    // below kFp8MinAmax: scale 1, values stored as 0
  };
  const int64_t M = int64_t(x.size()) / K;
  std::vector<int8_t> q(static_cast<size_t>(M * K), 99);
  std::vector<float> s(static_cast<size_t>(M));
  quantize_rows_int8_ref(x.data(), false, M, K, K, q.data(), s.data());
  const std::vector<int> want = {0,   0,    0,   0,    0,  0,    //
                                 64,  0,    -127, 32,  16, 127,  // 1·63.5 = 63.5 → 64 (even), 0.25·63.5 = 15.875 → 16
                                 127, 127,  0,   -127, -127, 0,  //
                                 64,  -127, 32,  127,  16, 0,    // 3·127/6 = 63.5 → 64; 0.75·127/6 = 15.875 → 16
                                 0,   0,    0,   0,    0,  0};
  for (int64_t i = 0; i < M * K; ++i) EXPECT_EQ(int(q[size_t(i)]), want[size_t(i)]) << "x8[" << i / K << "," << i % K << "]";
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 2.0f / 127.0f);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_EQ(s[3], 6.0f / 127.0f);
  EXPECT_EQ(s[4], 1.0f);
}

TEST(QuantizeRowsInt8Ref, Bf16RowsStridesAndRoundTrip) {
  // bf16 input and a padded stride give the bytes of the fp32 path on the bf16 values; the round trip
  // is within half a step (amax/254) of every finite element.
  const int64_t M = 9, K = 257, ldx = K + 5;
  std::vector<float> x = make_rows(M, K, ldx, 7);
  for (auto& v : x)
    if (!std::isfinite(v) || std::fabs(v) > 1e29f) v = 0.5f;
  std::vector<uint16_t> xb(x.size());
  for (size_t i = 0; i < x.size(); ++i) xb[i] = f32_to_bf16(x[i]), x[i] = bf16_to_f32(xb[i]);
  std::vector<int8_t> qf(size_t(M * K)), qb(size_t(M * K));
  std::vector<float> sf(static_cast<size_t>(M)), sb(static_cast<size_t>(M));
  quantize_rows_int8_ref(x.data(), false, M, K, ldx, qf.data(), sf.data());
  quantize_rows_int8_ref(xb.data(), true, M, K, ldx, qb.data(), sb.data());
  EXPECT_EQ(qf, qb);
  EXPECT_EQ(sf, sb);
  for (int64_t m = 0; m < M; ++m) {
    float amax = 0.0f;
    for (int64_t k = 0; k < K; ++k) amax = std::max(amax, std::fabs(x[size_t(m * ldx + k)]));
    for (int64_t k = 0; k < K; ++k) {
      const double v = x[size_t(m * ldx + k)], d = double(qf[size_t(m * K + k)]) * sf[size_t(m)];
      EXPECT_LE(std::fabs(d - v), double(amax) / 254.0 * 1.0001 + 1e-30) << m << "," << k;
    }
  }
}

TEST(Fp8ScaleVectorRef, MultipliesOrCopies) {
  const std::vector<float> s = {1.5f, -2.0f, 3e-3f}, g = {2.0f, 0.5f, -7.0f};
  std::vector<float> out(3);
  fp8_scale_vector_ref(s.data(), g.data(), out.data(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[size_t(i)], s[size_t(i)] * g[size_t(i)]);
  fp8_scale_vector_ref(s.data(), nullptr, out.data(), 3);
  EXPECT_EQ(out, s);
}

TEST(LinearFp8Ref, FormulaOnQuantisedOperands) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 300, 13}, {300, 7, 48}, {5, 9, 0}}) {
    std::vector<float> x(static_cast<size_t>(M * K)), w(static_cast<size_t>(N * K)), b(static_cast<size_t>(N));
    for (auto& v : x) v = u(rng) * 3.0f;
    for (auto& v : w) v = u(rng) * 0.05f;
    for (auto& v : b) v = u(rng);
    std::vector<uint8_t> x8(x.size()), w8(w.size());
    std::vector<float> sx(static_cast<size_t>(M)), sw(static_cast<size_t>(N));
    quantize_rows_fp8_ref(x.data(), false, M, K, K, x8.data(), sx.data());
    quantize_rows_fp8_ref(w.data(), false, N, K, K, w8.data(), sw.data());
    std::vector<float> y(static_cast<size_t>(M * N)), yq(y.size()), yp(y.size());
    linear_fp8_quantized_ref(x8.data(), sx.data(), w8.data(), sw.data(), b.data(), yq.data(), M, N, K);
    linear_fp8_prequant_ref(x.data(), w8.data(), sw.data(), b.data(), yp.data(), M, N, K);
    linear_fp8_ref(x.data(), w.data(), b.data(), y.data(), M, N, K);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double p = 0;  // exact: e4m3 products summed in double
        for (int64_t k = 0; k < K; ++k)
          p += double(fp8_e4m3_decode(x8[size_t(i * K + k)])) * fp8_e4m3_decode(w8[size_t(j * K + k)]);
        const float want = float(p * double(sx[size_t(i)]) * double(sw[size_t(j)]) + double(b[size_t(j)]));
        const size_t o = size_t(i * N + j);
        ASSERT_EQ(bits(yq[o]), bits(want)) << "y[" << i << "," << j << "] M=" << M << " N=" << N << " K=" << K;
        ASSERT_EQ(bits(yp[o]), bits(want)) << i << "," << j;
        ASSERT_EQ(bits(y[o]), bits(want)) << i << "," << j;
      }
  }
}

// The INT8 emulation (fp8_config.gemm_format int8): the formula over int32 sums, exact, on odd shapes
// incl. K = 0 and |w8| at ±127 everywhere (the largest sums).
TEST(LinearInt8Ref, FormulaOnQuantisedOperands) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 300, 13}, {300, 7, 48}, {5, 9, 0},
                         {2, 3, 5000}}) {
    std::vector<float> x(static_cast<size_t>(M * K)), w(static_cast<size_t>(N * K)), b(static_cast<size_t>(N));
    for (auto& v : x) v = u(rng) * 3.0f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = K == 5000 ? (i % 2 ? 0.05f : -0.05f) : u(rng) * 0.05f;
    for (auto& v : b) v = u(rng);
    std::vector<int8_t> x8(x.size()), w8(w.size());
    std::vector<float> sx(static_cast<size_t>(M)), sw(static_cast<size_t>(N));
    quantize_rows_int8_ref(x.data(), false, M, K, K, x8.data(), sx.data());
    quantize_rows_int8_ref(w.data(), false, N, K, K, w8.data(), sw.data());
    std::vector<float> yq(static_cast<size_t>(M * N)), yp(yq.size());
    linear_int8_quantized_ref(x8.data(), sx.data(), w8.data(), sw.data(), b.data(), yq.data(), M, N, K);
    linear_int8_prequant_ref(x.data(), w8.data(), sw.data(), b.data(), yp.data(), M, N, K);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t p = 0;
        for (int64_t k = 0; k < K; ++k) p += int64_t(x8[size_t(i * K + k)]) * w8[size_t(j * K + k)];
        const float want = float(double(p) * double(sx[size_t(i)]) * double(sw[size_t(j)]) + double(b[size_t(j)]));
        const size_t o = size_t(i * N + j);
        ASSERT_EQ(bits(yq[o]), bits(want)) << "y[" << i << "," << j << "] M=" << M << " N=" << N << " K=" << K;
        ASSERT_EQ(bits(yp[o]), bits(want)) << i << "," << j;
      }
  }
}

TEST(LinearFp8Ref, CloseToFp32Linear) {
  // e4m3 keeps 3 mantissa bits: each operand carries ~2^-5 relative rms error, the product ~3%.
  const int64_t M = 37, N = 45, K = 512;
  std::mt19937 rng(11);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(M * K)), w(static_cast<size_t>(N * K)), b(static_cast<size_t>(N));
  std::vector<float> y(static_cast<size_t>(M * N)), ref(y.size());
  for (auto& v : x) v = n01(rng);
  for (auto& v : w) v = 0.02f * n01(rng);
  for (auto& v : b) v = 0.1f * n01(rng);
  linear_fp8_ref(x.data(), w.data(), b.data(), y.data(), M, N, K);
  linear_ref(x.data(), w.data(), b.data(), ref.data(), M, N, K);
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    num += (double(y[i]) - ref[i]) * (double(y[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LT(rel, 0.06);
  EXPECT_GT(rel, 1e-4);  // it is quantised
}
