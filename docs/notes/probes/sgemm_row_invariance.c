// Probe, not part of vgen: does OpenBLAS's sgemm round a row the same whichever rows share its
// call? y = x·wᵀ (vgen's linear_ref form) for M rows in one call against the same rows split in two
// calls at `cut`, rows in one-row calls (the form of kern::linear_rows_ref), and rows in calls of a
// fixed R rows (tail zero-padded), each compared bit for bit. Prints one JSON line per case.
// Build and run: gcc -O2 sgemm_row_invariance.c -o sri -lopenblas
//   for c in Haswell Zen SkylakeX Sandybridge; do OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=$c ./sri; done
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// rows [r0, r0 + m) of x into y, in calls of R rows (R = 0: one call; tails zero-padded to R)
static void gemm(int m, int N, int K, const float* x, const float* w, float* y, int R) {
  if (R == 0) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, N, K, 1.0f, x, K, w, K, 0.0f, y, N);
    return;
  }
  float* a = calloc((size_t)R * K, sizeof(float));
  float* c = malloc((size_t)R * N * sizeof(float));
  for (int r = 0; r < m; r += R) {
    const int n = m - r < R ? m - r : R;
    memset(a, 0, (size_t)R * K * sizeof(float));
    memcpy(a, x + (size_t)r * K, (size_t)n * K * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, N, K, 1.0f, a, K, w, K, 0.0f, c, N);
    memcpy(y + (size_t)r * N, c, (size_t)n * N * sizeof(float));
  }
  free(a);
  free(c);
}

int main(void) {
  const int cases[][4] = {{160, 64, 64, 80}, {150, 64, 192, 75}, {1000, 128, 128, 333}, {2000, 256, 256, 1001}};
  const int chunks[] = {0, 1, 16, 64};
  const char* core = getenv("OPENBLAS_CORETYPE");
  for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ++ci) {
    const int M = cases[ci][0], K = cases[ci][1], N = cases[ci][2], cut = cases[ci][3];
    float* x = malloc(sizeof(float) * M * K);
    float* w = malloc(sizeof(float) * N * K);
    float* y1 = malloc(sizeof(float) * M * N);
    float* y2 = malloc(sizeof(float) * M * N);
    unsigned s = 12345;
    for (int i = 0; i < M * K; ++i) s = s * 1103515245u + 12345u, x[i] = ((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    for (int i = 0; i < N * K; ++i) s = s * 1103515245u + 12345u, w[i] = ((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); ++k) {
      const int R = chunks[k];
      gemm(M, N, K, x, w, y1, R);
      gemm(cut, N, K, x, w, y2, R);
      gemm(M - cut, N, K, x + (size_t)cut * K, w, y2 + (size_t)cut * N, R);
      int diff = 0;
      for (int i = 0; i < M * N; ++i) diff += memcmp(&y1[i], &y2[i], sizeof(float)) != 0;
      printf("{\"coretype\": \"%s\", \"M\": %d, \"K\": %d, \"N\": %d, \"cut\": %d, \"rows_per_call\": %d, "
             "\"elements\": %d, \"differ\": %d}\n", core ? core : "", M, K, N, cut, R, M * N, diff);
    }
    free(x), free(w), free(y1), free(y2);
  }
  return 0;
}
