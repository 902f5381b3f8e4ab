#include "kernels/gemm/gemm_fp8_ref.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/quant_ref.h"

namespace vgen::kern {

namespace {

constexpr int64_t kBlock = 256;  // rows of x and w decoded at a time (bounded memory)

void decode_rows(const uint8_t* q, int64_t rows, int64_t K, const double* table, double* out) {
  for (int64_t i = 0; i < rows * K; ++i) out[i] = table[q[i]];
}

// The formula over bytes that `table` decodes (e4m3, or INT8 read as bytes).
void linear_quantized_ref(const uint8_t* x8, const float* x_scale, const uint8_t* w8, const float* w_scale,
                          const float* bias, float* y, int64_t M, int64_t N, int64_t K, const double (&table)[256]) {
  if (M == 0 || N == 0) return;
  std::vector<double> xd, wd, p(size_t(kBlock * kBlock), 0.0);
  for (int64_t n0 = 0; n0 < N; n0 += kBlock) {
    const int64_t nb = std::min(kBlock, N - n0);
    wd.resize(size_t(nb * K));
    decode_rows(w8 + n0 * K, nb, K, table, wd.data());
    for (int64_t m0 = 0; m0 < M; m0 += kBlock) {
      const int64_t mb = std::min(kBlock, M - m0);
      xd.resize(size_t(mb * K));
      decode_rows(x8 + m0 * K, mb, K, table, xd.data());
      // Exact in any summation order (see the header), so BLAS may block and thread freely.
      if (K > 0)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(mb), int(nb), int(K), 1.0, xd.data(), int(K),
                    wd.data(), int(K), 0.0, p.data(), int(nb));
      else
        std::fill(p.begin(), p.end(), 0.0);
      for (int64_t i = 0; i < mb; ++i)
        for (int64_t j = 0; j < nb; ++j) {
          double v = p[size_t(i * nb + j)] * double(x_scale[m0 + i]) * double(w_scale[n0 + j]);
          if (bias) v += double(bias[n0 + j]);
          y[(m0 + i) * N + n0 + j] = float(v);
        }
    }
  }
}

}  // namespace

void linear_fp8_quantized_ref(const uint8_t* x8, const float* x_scale, const uint8_t* w8, const float* w_scale,
                              const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  double table[256];
  for (int c = 0; c < 256; ++c) table[c] = fp8_e4m3_decode(uint8_t(c));
  linear_quantized_ref(x8, x_scale, w8, w_scale, bias, y, M, N, K, table);
}

void linear_int8_quantized_ref(const int8_t* x8, const float* x_scale, const int8_t* w8, const float* w_scale,
                               const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  double table[256];
  for (int c = 0; c < 256; ++c) table[c] = double(int8_t(uint8_t(c)));
  linear_quantized_ref(reinterpret_cast<const uint8_t*>(x8), x_scale, reinterpret_cast<const uint8_t*>(w8), w_scale,
                       bias, y, M, N, K, table);
}

void linear_int8_prequant_ref(const float* x, const int8_t* w8, const float* w_scale, const float* bias, float* y,
                              int64_t M, int64_t N, int64_t K) {
  std::vector<int8_t> x8(static_cast<size_t>(M * K));
  std::vector<float> sx(static_cast<size_t>(M));
  quantize_rows_int8_ref(x, false, M, K, K, x8.data(), sx.data());
  linear_int8_quantized_ref(x8.data(), sx.data(), w8, w_scale, bias, y, M, N, K);
}

void linear_fp8_prequant_ref(const float* x, const uint8_t* w8, const float* w_scale, const float* bias, float* y,
                             int64_t M, int64_t N, int64_t K) {
  std::vector<uint8_t> x8(static_cast<size_t>(M * K));
  std::vector<float> sx(static_cast<size_t>(M));
  quantize_rows_fp8_ref(x, false, M, K, K, x8.data(), sx.data());
  linear_fp8_quantized_ref(x8.data(), sx.data(), w8, w_scale, bias, y, M, N, K);
}

void linear_fp8_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  std::vector<uint8_t> w8(static_cast<size_t>(N * K));
  std::vector<float> sw(static_cast<size_t>(N));
  quantize_rows_fp8_ref(w, false, N, K, K, w8.data(), sw.data());
  linear_fp8_prequant_ref(x, w8.data(), sw.data(), bias, y, M, N, K);
}

}  // namespace vgen::kern
