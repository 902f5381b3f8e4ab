#include "kernels/attention/attention_fp8_ref.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {
namespace {

// INT8 or e4m3 values of x·mul, and the block's dequantisation scale, for rows [r0, r1) of a
// [rows, D] slab.
float quant_block(const std::vector<float>& x, int64_t r0, int64_t r1, int64_t D, Fp8Qk qk, std::vector<float>& x8) {
  float amax = 0.0f;
  for (int64_t i = r0 * D; i < r1 * D; ++i) amax = std::max(amax, std::fabs(x[size_t(i)]));
  const bool i8 = qk == Fp8Qk::kInt8;
  const float mul = i8 ? int8_quant_mul(amax) : fp8_quant_mul(amax);
  for (int64_t i = r0 * D; i < r1 * D; ++i)
    x8[size_t(i)] = i8 ? int8_round(x[size_t(i)] * mul) : fp8_e4m3_round(x[size_t(i)] * mul);
  return i8 ? int8_dequant_mul(amax) : fp8_dequant_mul(amax);
}

// INT8 Q·Kᵀ's online softmax over one 128-key tile in the device kernel's form (attention_fp8.cu),
// in log2 units with p carrying the 448: the score unit sl2 = sq·sk·scale·log2 e cut to 22
// significant bits; the tile's row maximum m raised to the grid of the softmax constant
// off = (2²³ + 2²²)·sl2 + m (the sum rounded up, then m = off − that product, exact while the
// product is at least |m|), which the device's
// FFMA subtracts from the float 2²³ + 2²² + i: p·448 = exp2((2²³ + 2²² + i)·sl2 − off) with one
// rounding. m is still a bound (p·448 ≤ 448) and m + log2 l, the LSE, does not depend on it.
struct Int8Tile {
  float sl2 = 0.0f, off = 0.0f;
  // Updates m (log2 units, with the 448) from the tile's largest integer score; returns the factor
  // exp2(m_old − m) for l and acc.
  float begin(float sq, float sk, float scale, float imax, float& m) {
    sl2 = std::bit_cast<float>(std::bit_cast<uint32_t>(sq * (scale * std::numbers::log2e_v<float>) * sk) & ~3u);
    float mn = std::max(m, std::fma(imax, sl2, -kFp8Log2Of448));
    const float base = kInt8ScoreBase * sl2;  // exact: 22-bit sl2 times 3·2²²
    off = base + mn;  // rounded up below, as the device's __fadd_ru: by the sum's exact error (TwoSum)
    const float t = off - base, err = (base - (off - t)) + (mn - t);
    if (err > 0.0f) off = std::nextafter(off, INFINITY);
    mn = off - base;  // exact while base ≥ |mn|, else within ½ ulp of mn (as on the device)
    const float corr = std::exp2(m - mn);  // 0 on the first tile
    m = mn;
    return corr;
  }
  float p448(float i) const { return std::exp2(std::fma(kInt8ScoreBase + i, sl2, -off)); }
};

}  // namespace

void attention_fp8_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                       int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale,
                       Fp8Qk qk) {
  const int64_t nk = std::clamp<int64_t>(num_valid_kv, 0, Skv);
  const int64_t kb = kAttnFp8Block;
  std::vector<float> qs(size_t(Sq * D)), ks(size_t(std::max<int64_t>(nk, 1) * D)), vs(ks.size());
  std::vector<float> q8(qs.size()), k8(ks.size()), v8(ks.size());
  const size_t nd = size_t(D);
  std::vector<float> km(nd), sv(nd), acc(nd), s(static_cast<size_t>(kb));
  std::vector<float> sq(static_cast<size_t>((Sq + kb - 1) / kb)), sk(static_cast<size_t>((nk + kb - 1) / kb + 1));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      auto at = [&](const float* t, int64_t S, int64_t i, int64_t d) { return t[((b * S + i) * H + h) * D + d]; };
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t d = 0; d < D; ++d) qs[size_t(i * D + d)] = at(q, Sq, i, d);
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t d = 0; d < D; ++d) {
          ks[size_t(j * D + d)] = at(k, Skv, j, d);
          vs[size_t(j * D + d)] = at(v, Skv, j, d);
        }
      // Key mean: float sums per 128-key chunk, the chunks added in order (as the device does).
      for (int64_t d = 0; d < D; ++d) {
        float total = 0.0f, vmax = 0.0f;
        for (int64_t c = 0; c < nk; c += kb) {
          float part = 0.0f;
          for (int64_t j = c; j < std::min(nk, c + kb); ++j) {
            part += ks[size_t(j * D + d)];
            vmax = std::max(vmax, std::fabs(vs[size_t(j * D + d)]));
          }
          total += part;
        }
        km[size_t(d)] = nk > 0 ? total / float(nk) : 0.0f;
        const float mul = fp8_quant_mul(vmax);
        sv[size_t(d)] = fp8_dequant_mul(vmax);
        for (int64_t j = 0; j < nk; ++j) v8[size_t(j * D + d)] = fp8_e4m3_round(vs[size_t(j * D + d)] * mul);
      }
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t d = 0; d < D; ++d) ks[size_t(j * D + d)] -= km[size_t(d)];
      for (int64_t c = 0; c < nk; c += kb) sk[size_t(c / kb)] = quant_block(ks, c, std::min(nk, c + kb), D, qk, k8);
      for (int64_t c = 0; c < Sq; c += kb) sq[size_t(c / kb)] = quant_block(qs, c, std::min(Sq, c + kb), D, qk, q8);

      for (int64_t i = 0; i < Sq; ++i) {
        float* o = out + ((b * Sq + i) * H + h) * D;
        float* lse_i = lse ? lse + (b * H + h) * Sq + i : nullptr;
        if (nk == 0) {
          std::fill(o, o + D, 0.0f);
          if (lse_i) *lse_i = -INFINITY;
          continue;
        }
        float m = -INFINITY, l = 0.0f;
        std::fill(acc.begin(), acc.end(), 0.0f);
        if (qk == Fp8Qk::kInt8) {  // log2 units, l and acc carry the 448 (Int8Tile)
          for (int64_t c = 0; c < nk; c += kb) {
            const int64_t n = std::min(nk, c + kb) - c;
            float imax = -INFINITY;
            for (int64_t j = 0; j < n; ++j) {
              float dot = 0.0f;  // an integer below 2²¹: exact
              for (int64_t d = 0; d < D; ++d) dot += q8[size_t(i * D + d)] * k8[size_t((c + j) * D + d)];
              s[size_t(j)] = dot;
              imax = std::max(imax, dot);
            }
            Int8Tile tile;
            const float corr = tile.begin(sq[size_t(i / kb)], sk[size_t(c / kb)], scale, imax, m);
            l *= corr;
            for (int64_t d = 0; d < D; ++d) acc[size_t(d)] *= corr;
            for (int64_t j = 0; j < n; ++j) {
              const float p = tile.p448(s[size_t(j)]);
              l += p;
              const float p8 = fp8_e4m3_round(p);
              for (int64_t d = 0; d < D; ++d) acc[size_t(d)] += p8 * v8[size_t((c + j) * D + d)];
            }
          }
          for (int64_t d = 0; d < D; ++d) o[d] = acc[size_t(d)] * sv[size_t(d)] / l;
          if (lse_i) {
            float qkm = 0.0f;
            for (int64_t d = 0; d < D; ++d) qkm += qs[size_t(i * D + d)] * km[size_t(d)];
            *lse_i = (m + std::log2(l)) * std::numbers::ln2_v<float> + scale * qkm;
          }
          continue;
        }
        for (int64_t c = 0; c < nk; c += kb) {
          const int64_t n = std::min(nk, c + kb) - c;
          const float f = sq[size_t(i / kb)] * sk[size_t(c / kb)] * scale;
          float mt = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            float dot = 0.0f;
            for (int64_t d = 0; d < D; ++d) dot += q8[size_t(i * D + d)] * k8[size_t((c + j) * D + d)];
            s[size_t(j)] = dot * f;
            mt = std::max(mt, s[size_t(j)]);
          }
          const float mn = std::max(m, mt);
          const float corr = std::exp(m - mn);  // exp(-inf) = 0 on the first tile
          m = mn;
          l *= corr;
          for (int64_t d = 0; d < D; ++d) acc[size_t(d)] *= corr;
          for (int64_t j = 0; j < n; ++j) {
            const float p = std::exp(s[size_t(j)] - m);
            l += p;
            const float p8 = fp8_e4m3_round(p * kFp8E4M3Max);
            for (int64_t d = 0; d < D; ++d) acc[size_t(d)] += p8 * v8[size_t((c + j) * D + d)];
          }
        }
        for (int64_t d = 0; d < D; ++d) o[d] = acc[size_t(d)] * sv[size_t(d)] / (kFp8E4M3Max * l);
        if (lse_i) {
          float qk = 0.0f;
          for (int64_t d = 0; d < D; ++d) qk += qs[size_t(i * D + d)] * km[size_t(d)];
          *lse_i = m + std::log(l) + scale * qk;
        }
      }
    }
}

}  // namespace vgen::kern
