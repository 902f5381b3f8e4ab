#include "kernels/gemm/gemm_ref.h"

#include <cblas.h>

#include <algorithm>

namespace vgen::kern {

void linear_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  if (M == 0 || N == 0) return;
  if (bias) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) y[i * N + j] = bias[j];
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(M), int(N), int(K), 1.0f, x, int(K), w, int(K),
              bias ? 1.0f : 0.0f, y, int(N));
}

void linear_rows_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  if (M == 0 || N == 0) return;
  for (int64_t i = 0; i < M; ++i) {
    float* yi = y + i * N;
    // y preset (bias or zeros) and beta 1: no reliance on how a BLAS treats beta 0 over unset memory.
    if (bias)
      std::copy(bias, bias + N, yi);
    else
      std::fill(yi, yi + N, 0.0f);
    if (K > 0) cblas_sgemv(CblasRowMajor, CblasNoTrans, int(N), int(K), 1.0f, w, int(K), x + i * K, 1, 1.0f, yi, 1);
  }
}

void matmul_ref(const float* a, const float* b, float* c, int64_t M, int64_t N, int64_t K, bool trans_b,
                float alpha, float beta) {
  if (M == 0 || N == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), alpha, a,
              int(K), b, trans_b ? int(K) : int(N), beta, c, int(N));
}

}  // namespace vgen::kern
