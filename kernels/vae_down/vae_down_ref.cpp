#include "kernels/vae_down/vae_down_ref.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace vgen::kern {

void conv3d_strided_ref(const float* x, const float* w, const float* bias, float* y, int64_t Cin, int64_t Ti,
                        int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw, const Conv3dPad& pad,
                        int64_t stride_t, int64_t stride_s) {
  const int64_t Hp = Hi + pad.top + pad.bottom, Wp = Wi + pad.left + pad.right;
  if (Ti < kt || Hp < kh || Wp < kw || Cout <= 0) return;
  const int64_t To = (Ti - kt) / stride_t + 1, Ho = (Hp - kh) / stride_s + 1, Wo = (Wp - kw) / stride_s + 1;
  const int64_t taps = kt * kh * kw, S = Ho * Wo;
  // Weights per tap: wr[tap][co][ci].
  std::vector<float> wr(size_t(taps * Cout * Cin));
  for (int64_t co = 0; co < Cout; ++co)
    for (int64_t ci = 0; ci < Cin; ++ci)
      for (int64_t tp = 0; tp < taps; ++tp) wr[size_t((tp * Cout + co) * Cin + ci)] = w[(co * Cin + ci) * taps + tp];
  std::vector<float> g(size_t(Cin * S)), acc(size_t(Cout * S));  // gathered input [Cin, S]; output [Cout, S]
  for (int64_t to = 0; to < To; ++to) {
    for (int64_t co = 0; co < Cout; ++co)
      std::fill(acc.begin() + co * S, acc.begin() + (co + 1) * S, bias ? bias[co] : 0.0f);
    for (int64_t dt = 0; dt < kt; ++dt) {
      const int64_t ti = stride_t * to + dt;
      for (int64_t dh = 0; dh < kh; ++dh)
        for (int64_t dw = 0; dw < kw; ++dw) {
#pragma omp parallel for schedule(static)
          for (int64_t ci = 0; ci < Cin; ++ci) {
            const float* src = x + (ci * Ti + ti) * Hi * Wi;
            float* dst = g.data() + ci * S;
            for (int64_t ho = 0; ho < Ho; ++ho) {
              const int64_t hi = stride_s * ho + dh - pad.top;
              for (int64_t wo = 0; wo < Wo; ++wo) {
                const int64_t wi = stride_s * wo + dw - pad.left;
                dst[ho * Wo + wo] = hi >= 0 && hi < Hi && wi >= 0 && wi < Wi ? src[hi * Wi + wi] : 0.0f;
              }
            }
          }
          const int64_t tp = (dt * kh + dh) * kw + dw;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(Cout), int(S), int(Cin), 1.0f,
                      wr.data() + tp * Cout * Cin, int(Cin), g.data(), int(S), 1.0f, acc.data(), int(S));
        }
    }
    for (int64_t co = 0; co < Cout; ++co) std::copy_n(acc.data() + co * S, S, y + (co * To + to) * S);
  }
}

void patchify_ref(const float* x, float* y, int64_t C, int64_t T, int64_t H, int64_t W, int64_t p) {
  const int64_t h = H / p, w = W / p;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t q = 0; q < p; ++q)
      for (int64_t r = 0; r < p; ++r) {
        float* dst = y + ((c * p + q) * p + r) * T * h * w;
        for (int64_t t = 0; t < T; ++t)
          for (int64_t i = 0; i < h; ++i)
            for (int64_t j = 0; j < w; ++j) dst[(t * h + i) * w + j] = x[((c * T + t) * H + i * p + r) * W + j * p + q];
      }
}

void avg_down_add_ref(const float* x, float* y, int64_t Cin, int64_t T, int64_t H, int64_t W, int64_t Cout,
                      int64_t ft, int64_t fs) {
  const int64_t To = avg_down_frames(T, ft), pad_t = To * ft - T, Ho = H / fs, Wo = W / fs;
  const int64_t factor = ft * fs * fs, g = Cin * factor / Cout;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < Cout; ++o)
    for (int64_t t = 0; t < To; ++t)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          float sum = 0.0f;
          for (int64_t k = o * g; k < (o + 1) * g; ++k) {
            const int64_t c = k / factor, rem = k % factor, a = rem / (fs * fs), pq = rem % (fs * fs);
            const int64_t ti = t * ft + a - pad_t;
            if (ti >= 0) sum += x[((c * T + ti) * H + i * fs + pq / fs) * W + j * fs + pq % fs];
          }
          y[((o * To + t) * Ho + i) * Wo + j] += sum / float(g);
        }
}

}  // namespace vgen::kern
