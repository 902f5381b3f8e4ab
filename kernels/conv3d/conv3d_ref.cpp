#include "kernels/conv3d/conv3d_ref.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace vgen::kern {

// Layout trick: input frames are copied into zero-padded [Cin, Hp, Wp] buffers (plus kw−1 zero
// floats per channel), and each tap (dt, dh, dw) is one GEMM
//   Yw[Cout, rows·Wp] += W_tap[Cout, Cin] · P_{t+dt}[:, off .. off + rows·Wp],  off = (r0+dh)·Wp + dw,
// where Yw is the output over the padded width; the last kw−1 columns of each row are discarded.
// Only kt padded frames are alive at a time (a ring indexed by frame mod kt), so the scratch memory
// does not grow with the chunk length; row blocks keep the GEMM operands cache-sized.
void conv3d_ref(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t Cin, int64_t Ti,
                int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw, const Conv3dPad& pad,
                const float* prev, int64_t Tp) {
  if (!prev) Tp = 0;
  const int64_t Tx = Ti, Tall = Tp + Ti;  // frames of x; of the whole [prev, x] sequence
  const int64_t Hp = Hi + pad.top + pad.bottom, Wp = Wi + pad.left + pad.right;
  const int64_t To = Tall - kt + 1, Ho = Hp - kh + 1, Wo = Wp - kw + 1;
  if (N <= 0 || Cout <= 0 || To <= 0 || Ho <= 0 || Wo <= 0) return;
  const int64_t taps = kt * kh * kw;

  // Weights repacked per tap: wr[tap][co][ci] (row-major, unit stride in ci for the GEMM).
  std::vector<float> wr(size_t(taps * Cout * Cin));
  for (int64_t co = 0; co < Cout; ++co)
    for (int64_t ci = 0; ci < Cin; ++ci)
      for (int64_t tp = 0; tp < taps; ++tp) wr[size_t((tp * Cout + co) * Cin + ci)] = w[(co * Cin + ci) * taps + tp];

  // Without spatial padding, kw == 1 and no previous frames the input is used in place.
  const bool direct = pad.top == 0 && pad.bottom == 0 && pad.left == 0 && pad.right == 0 && kw == 1 && Tp == 0;
  const int64_t cs = direct ? Hi * Wi : Hp * Wp + (kw - 1);  // per-channel stride of a padded frame
  std::vector<float> ring;                                      // [kt][Cin][cs], borders stay zero
  if (!direct) ring.assign(size_t(kt * Cin * cs), 0.0f);

  // Rows per block: about 8k output columns, at least one row.
  const int64_t rows_per_block = std::max<int64_t>(1, std::min<int64_t>(Ho, 8192 / Wp));
  std::vector<float> yw(size_t(Cout * rows_per_block * Wp));

  for (int64_t n = 0; n < N; ++n) {
    const float* xn = x + n * Cin * Tx * Hi * Wi;
    const float* pn = prev ? prev + n * Cin * Tp * Hi * Wi : nullptr;
    float* yn = y + n * Cout * To * Ho * Wo;
    // Copies input frame t of [prev, x] into its ring slot.
    auto load_frame = [&](int64_t t) {
      float* slot = ring.data() + (t % kt) * Cin * cs;
#pragma omp parallel for schedule(static)
      for (int64_t ci = 0; ci < Cin; ++ci) {
        const float* src = t < Tp ? pn + (ci * Tp + t) * Hi * Wi : xn + (ci * Tx + t - Tp) * Hi * Wi;
        float* dst = slot + ci * cs;
        for (int64_t h = 0; h < Hi; ++h)
          std::memcpy(dst + (h + pad.top) * Wp + pad.left, src + h * Wi, size_t(Wi) * sizeof(float));
      }
    };
    if (!direct)
      for (int64_t t = 0; t < kt - 1; ++t) load_frame(t);
    for (int64_t to = 0; to < To; ++to) {
      if (!direct) load_frame(to + kt - 1);
      for (int64_t r0 = 0; r0 < Ho; r0 += rows_per_block) {
        const int64_t rows = std::min(rows_per_block, Ho - r0);
        const int64_t M = rows * Wp;  // output columns of this block over the padded width
        for (int64_t co = 0; co < Cout; ++co)
          std::fill(yw.begin() + co * M, yw.begin() + (co + 1) * M, bias ? bias[co] : 0.0f);
        for (int64_t dt = 0; dt < kt; ++dt) {
          // Frame to+dt: its ring slot (channel stride cs), or x itself (channel stride Tx·cs).
          const float* frame = direct ? xn + (to + dt) * cs : ring.data() + ((to + dt) % kt) * Cin * cs;
          const int64_t ldb = direct ? Tx * cs : cs;
          for (int64_t dh = 0; dh < kh; ++dh)
            for (int64_t dw = 0; dw < kw; ++dw) {
              const int64_t tp = (dt * kh + dh) * kw + dw;
              const float* B = frame + (r0 + dh) * Wp + dw;
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(Cout), int(M), int(Cin), 1.0f,
                          wr.data() + tp * Cout * Cin, int(Cin), B, int(ldb), 1.0f, yw.data(), int(M));
            }
        }
        // Keep the first Wo columns of each padded-width row.
#pragma omp parallel for schedule(static)
        for (int64_t co = 0; co < Cout; ++co) {
          float* dst = yn + ((co * To + to) * Ho + r0) * Wo;
          const float* src = yw.data() + co * M;
          for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * Wo, src + r * Wp, size_t(Wo) * sizeof(float));
        }
      }
    }
  }
}

void conv3d_naive_ref(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t Cin,
                      int64_t Ti, int64_t Hi, int64_t Wi, int64_t Cout, int64_t kt, int64_t kh, int64_t kw,
                      const Conv3dPad& pad) {
  const int64_t To = Ti - kt + 1, Ho = Hi + pad.top + pad.bottom - kh + 1, Wo = Wi + pad.left + pad.right - kw + 1;
  if (N <= 0 || To <= 0 || Ho <= 0 || Wo <= 0) return;
  for (int64_t n = 0; n < N; ++n)
#pragma omp parallel for schedule(static)
    for (int64_t co = 0; co < Cout; ++co)
      for (int64_t to = 0; to < To; ++to)
        for (int64_t ho = 0; ho < Ho; ++ho)
          for (int64_t wo = 0; wo < Wo; ++wo) {
            double acc = bias ? bias[co] : 0.0;
            for (int64_t ci = 0; ci < Cin; ++ci)
              for (int64_t a = 0; a < kt; ++a)
                for (int64_t b = 0; b < kh; ++b) {
                  const int64_t hi = ho + b - pad.top;
                  if (hi < 0 || hi >= Hi) continue;
                  for (int64_t c = 0; c < kw; ++c) {
                    const int64_t wi = wo + c - pad.left;
                    if (wi < 0 || wi >= Wi) continue;
                    acc += double(x[(((n * Cin + ci) * Ti + to + a) * Hi + hi) * Wi + wi]) *
                           double(w[(((co * Cin + ci) * kt + a) * kh + b) * kw + c]);
                  }
                }
            y[(((n * Cout + co) * To + to) * Ho + ho) * Wo + wo] = float(acc);
          }
}

}  // namespace vgen::kern
