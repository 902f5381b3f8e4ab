#include "kernels/attention/attention_cudnn_fp8_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/quant/fp8_e4m3_ref.h"

namespace vgen::kern {
namespace {

// The dequantised e4m3 values of x [B, S, HD]'s first n tokens, [B, n, HD], and the dequant scale.
float dequantised(const float* x, int64_t B, int64_t S, int64_t n, int64_t HD, std::vector<float>& out) {
  std::vector<uint8_t> x8(size_t(B * n * HD));
  const float amax = cudnn_fp8_quantize_ref(x, B, S, n, HD, x8.data());
  out.resize(x8.size());
  for (size_t i = 0; i < x8.size(); ++i) out[i] = fp8_e4m3_decode(x8[i]);
  return fp8_dequant_mul(amax);
}

struct Operands {
  std::vector<float> q8, k8, v8;  // e4m3 values (not yet descaled); k8 of K − km
  std::vector<float> km;          // [B, H, D]
  float dq = 1, dk = 1, dv = 1, so = 1, dso = 1;
  int64_t Sq = 0, nv = 0, H = 0, D = 0;
};

// One query row (b, h, i): out row o [D] and its lse. Online softmax over key tiles of `tile` keys
// (all of them when tile <= 0): m the running maximum, P rounded as e4m3(exp(s − m) · 448), l and
// the accumulator rescaled by exp(m_old − m) when m grows, O = acc / (448 · l) · dv at the end.
void attend_row(const Operands& p, const float* q_full, int64_t b, int64_t h, int64_t i, float scale,
                const CudnnFp8RefOptions& opt, float* o, float* lse) {
  const int64_t HD = p.H * p.D, nv = p.nv, D = p.D, tile = opt.key_tile > 0 ? opt.key_tile : nv;
  const float* qr = p.q8.data() + ((b * p.Sq + i) * HD + h * D);
  std::vector<float> s(static_cast<size_t>(nv));
  for (int64_t j = 0; j < nv; ++j) {
    const float* kr = p.k8.data() + ((b * nv + j) * HD + h * D);
    float acc = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc += qr[d] * kr[d];
    s[size_t(j)] = acc * scale * p.dq * p.dk;
  }
  float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
  std::fill(o, o + D, 0.0f);
  for (int64_t j0 = 0; j0 < nv; j0 += tile) {
    const int64_t j1 = std::min(nv, j0 + tile);
    float mn = m;
    for (int64_t j = j0; j < j1; ++j) mn = std::max(mn, s[size_t(j)]);
    const float r = std::exp(m - mn);  // 0 on the first tile (m = −inf)
    l *= r;
    for (int64_t d = 0; d < D; ++d) o[d] *= r;
    m = mn;
    for (int64_t j = j0; j < j1; ++j) {
      const float e = std::exp(s[size_t(j)] - m);
      l += e;
      const float p8 = fp8_e4m3_round(e * kFp8E4M3Max);
      const float* vr = p.v8.data() + ((b * nv + j) * HD + h * D);
      for (int64_t d = 0; d < D; ++d) o[d] += p8 * vr[d];
    }
  }
  for (int64_t d = 0; d < D; ++d) {
    o[d] = o[d] / l * (1.0f / kFp8E4M3Max) * p.dv;
    if (opt.e4m3_out) o[d] = fp8_e4m3_round(o[d] * p.so) * p.dso;
  }
  if (!lse) return;
  const float* q = q_full + ((b * p.Sq + i) * HD + h * D);  // the unquantised row
  const float* km = p.km.data() + (b * p.H + h) * D;
  float corr = 0.0f;
  for (int64_t d = 0; d < D; ++d) corr += q[d] * km[d];
  *lse = m + std::log(l) + scale * corr;
}

}  // namespace

void cudnn_fp8_key_mean_ref(const float* k, int64_t B, int64_t S, int64_t n, int64_t H, int64_t D, float* km) {
  const int64_t HD = H * D;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hd = 0; hd < HD; ++hd) {
      float total = 0.0f;
      for (int64_t j0 = 0; j0 < n; j0 += kCudnnFp8KeyChunk) {
        float sum = 0.0f;
        for (int64_t j = j0; j < std::min(n, j0 + kCudnnFp8KeyChunk); ++j) sum += k[size_t((b * S + j) * HD + hd)];
        total += sum;
      }
      km[size_t(b * HD + hd)] = total / float(n);
    }
}

float cudnn_fp8_quantize_ref(const float* x, int64_t B, int64_t S, int64_t n, int64_t HD, uint8_t* x8) {
  float amax = 0.0f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n * HD; ++i) amax = std::max(amax, std::fabs(x[size_t(b * S * HD + i)]));
  const float mul = fp8_quant_mul(amax);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n * HD; ++i) x8[size_t(b * n * HD + i)] = fp8_e4m3_encode(x[size_t(b * S * HD + i)] * mul);
  return amax;
}

void attention_cudnn_fp8_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                             int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale,
                             const CudnnFp8RefOptions& opt) {
  const int64_t HD = H * D, nv = std::clamp<int64_t>(num_valid_kv, 0, Skv);
  if (nv == 0) {
    std::fill(out, out + B * Sq * HD, 0.0f);
    if (lse) std::fill(lse, lse + B * H * Sq, -std::numeric_limits<float>::infinity());
    return;
  }
  Operands p;
  p.Sq = Sq, p.nv = nv, p.H = H, p.D = D;
  p.dq = dequantised(q, B, Sq, Sq, HD, p.q8);
  p.km.resize(size_t(B * HD));
  cudnn_fp8_key_mean_ref(k, B, Skv, nv, H, D, p.km.data());
  std::vector<float> ks(size_t(B * nv * HD));  // K − km, [B, nv, H, D]
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < nv; ++j)
      for (int64_t hd = 0; hd < HD; ++hd)
        ks[size_t((b * nv + j) * HD + hd)] = k[size_t((b * Skv + j) * HD + hd)] - p.km[size_t(b * HD + hd)];
  p.dk = dequantised(ks.data(), B, nv, nv, HD, p.k8);
  p.dv = dequantised(v, B, Skv, nv, HD, p.v8);
  // The output scale as the kernel forms it from V's amax (a_v = dv · 448 exactly for a scaled V).
  float amax_v = 0.0f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < nv * HD; ++i) amax_v = std::max(amax_v, std::fabs(v[size_t(b * Skv * HD + i)]));
  p.so = 0.5f * fp8_quant_mul(amax_v);
  p.dso = 2.0f * fp8_dequant_mul(amax_v);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i)
        attend_row(p, q, b, h, i, scale, opt, out + ((b * Sq + i) * HD + h * D),
                   lse ? lse + ((b * H + h) * Sq + i) : nullptr);
}

}  // namespace vgen::kern
