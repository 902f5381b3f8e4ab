// Where the FP8 attention's error comes from (label bench, CPU, never gates): exact attention in
// double against the same with Q·Kᵀ quantised (K smoothed, one scale per 128 tokens) and/or P·V
// quantised (V per channel, P·448), each half alone, and Q·Kᵀ in INT8 (round(x·127/amax)) instead
// of e4m3, on synthetic q, k ~ N(0, amp²), v ~ N(mean, 1): amp sets how peaked the softmax is, mean
// how far the output stands from zero. The e4m3 and INT8 roundings are the reference's
// (kernels/quant/fp8_e4m3_ref.h, kernels/attention/attention_fp8_ref.h); the softmax here is exact
// (double, one pass), so each quantisation's part shows alone.
// Usage: attention_fp8_error_bench [S] (default 2048; D = 128, one head). One JSON line per case.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/quant/fp8_e4m3_ref.h"

using namespace vgen::kern;

namespace {

enum class Qk { kExact, kE4m3, kInt8 };

// Rows [b·128, (b+1)·128) of x [S, D] rounded in place, one scale per block.
void quantise_blocks(std::vector<float>& x, int S, int D, Qk how) {
  for (int b = 0; b < S / 128; ++b) {
    float a = 0;
    for (int i = b * 128 * D; i < (b + 1) * 128 * D; ++i) a = std::max(a, std::fabs(x[size_t(i)]));
    for (int i = b * 128 * D; i < (b + 1) * 128 * D; ++i) {
      float& v = x[size_t(i)];
      v = how == Qk::kInt8 ? int8_round(v * int8_quant_mul(a)) * int8_dequant_mul(a)
                           : fp8_e4m3_round(v * fp8_quant_mul(a)) * fp8_dequant_mul(a);
    }
  }
}

std::vector<double> attend(std::vector<float> q, std::vector<float> k, std::vector<float> v, int S, int D, Qk qk,
                           bool pv8) {
  if (qk != Qk::kExact) {
    for (int d = 0; d < D; ++d) {  // smoothing: softmax is invariant to a common key offset
      double m = 0;
      for (int j = 0; j < S; ++j) m += k[size_t(j * D + d)];
      for (int j = 0; j < S; ++j) k[size_t(j * D + d)] -= float(m / S);
    }
    quantise_blocks(q, S, D, qk);
    quantise_blocks(k, S, D, qk);
  }
  if (pv8)
    for (int d = 0; d < D; ++d) {
      float a = 0;
      for (int j = 0; j < S; ++j) a = std::max(a, std::fabs(v[size_t(j * D + d)]));
      for (int j = 0; j < S; ++j)
        v[size_t(j * D + d)] = fp8_e4m3_round(v[size_t(j * D + d)] * fp8_quant_mul(a)) * fp8_dequant_mul(a);
    }
  const double scale = 1.0 / std::sqrt(double(D));
  std::vector<double> out(static_cast<size_t>(S) * D), s(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int i = 0; i < S; ++i) {
    double m = -1e300, l = 0;
    for (int j = 0; j < S; ++j) {
      double t = 0;
      for (int d = 0; d < D; ++d) t += double(q[size_t(i * D + d)]) * k[size_t(j * D + d)];
      s[size_t(j)] = t * scale;
      m = std::max(m, s[size_t(j)]);
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int j = 0; j < S; ++j) {
      const double p = std::exp(s[size_t(j)] - m);
      l += p;
      const double pq = pv8 ? fp8_e4m3_round(float(p * 448.0)) / 448.0 : p;
      for (int d = 0; d < D; ++d) acc[size_t(d)] += pq * v[size_t(j * D + d)];
    }
    for (int d = 0; d < D; ++d) out[size_t(i * D + d)] = acc[size_t(d)] / l;
  }
  return out;
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& r) {
  double n = 0, d = 0;
  for (size_t i = 0; i < a.size(); ++i) n += (a[i] - r[i]) * (a[i] - r[i]), d += r[i] * r[i];
  return std::sqrt(n / d);
}

}  // namespace

int main(int argc, char** argv) {
  const int S = argc > 1 ? std::max(128, std::atoi(argv[1]) / 128 * 128) : 2048, D = 128;
  for (double amp : {1.0, 2.0, 3.0})
    for (double mean : {0.0, 1.0}) {
      std::mt19937 g(1);
      std::normal_distribution<float> n(0.0f, 1.0f);
      std::vector<float> q(size_t(S) * D), k(q.size()), v(q.size());
      for (auto& x : q) x = float(amp) * n(g);
      for (auto& x : k) x = float(amp) * n(g);
      for (auto& x : v) x = n(g) + float(mean);
      const std::vector<double> e = attend(q, k, v, S, D, Qk::kExact, false);
      std::printf("{\"bench\": \"attention_fp8_error\", \"S\": %d, \"D\": %d, \"qk_amp\": %.1f, \"v_mean\": %.1f, "
                  "\"e4m3_qk_pv\": %.4f, \"e4m3_qk\": %.4f, \"e4m3_pv\": %.4f, \"int8_qk_e4m3_pv\": %.4f, "
                  "\"int8_qk\": %.4f}\n",
                  S, D, amp, mean, rel_l2(attend(q, k, v, S, D, Qk::kE4m3, true), e),
                  rel_l2(attend(q, k, v, S, D, Qk::kE4m3, false), e), rel_l2(attend(q, k, v, S, D, Qk::kExact, true), e),
                  rel_l2(attend(q, k, v, S, D, Qk::kInt8, true), e), rel_l2(attend(q, k, v, S, D, Qk::kInt8, false), e));
      std::fflush(stdout);
    }
  return 0;
}
