// Build and run on the GPU machine: nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/gemm_sweep docs/notes/probes/gemm_sweep.cu -lcublasLt && /tmp/gemm_sweep
// Recorded in results/attention/1xh200/2026-12-02_1xh200_fp8_attention_stages.jsonl.
// Probe: every cuBLASLt heuristic candidate (up to 16) for the fp8 block GEMMs of the 720p DiT,
// the descriptors of kernels/gemm/gemm_fp8.cu (TN e4m3, outer-vector fp32 scales, bias / GELU-bias,
// bf16 out, residual through C with beta 1), each timed (median of 7 after 2 warm-ups).
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x) do { auto s_ = (x); if (s_ != 0) { printf("err %d at %s:%d\n", int(s_), __FILE__, __LINE__); return 1; } } while (0)
__global__ void fill(uint8_t* p, size_t n, uint32_t seed) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i < n; i += size_t(gridDim.x) * blockDim.x) { uint32_t h = uint32_t(i) * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    uint8_t e = 0x20 + (h & 0x1f); p[i] = uint8_t(e | (h & 0x80)); }  // |x| in [2^-4, 2^0)
}
__global__ void fillf(float* p, size_t n, float v) { size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; if (i < n) p[i] = v * (1 + 0.001f * (i % 7)); }
int main() {
  struct S { int M, N, K; cublasLtEpilogue_t epi; bool resid; const char* name; };
  S shapes[] = {{75600, 5120, 5120, CUBLASLT_EPILOGUE_BIAS, false, "qkv 5120x5120 bias"},
                {75600, 5120, 5120, CUBLASLT_EPILOGUE_BIAS, true, "o 5120x5120 bias+resid"},
                {75600, 13824, 5120, CUBLASLT_EPILOGUE_GELU_BIAS, false, "ffn1 13824x5120 gelu_bias"},
                {75600, 5120, 13824, CUBLASLT_EPILOGUE_BIAS, true, "ffn2 5120x13824 bias+resid"}};
  cublasLtHandle_t h; CK(cublasLtCreate(&h));
  const size_t wsb = size_t(64) << 20; void* ws; CK(cudaMalloc(&ws, wsb));
  uint8_t *x, *w; void *d; float *xs, *wsc; void* bias;
  CK(cudaMalloc(&x, size_t(75600) * 13824)); CK(cudaMalloc(&w, size_t(13824) * 13824));
  CK(cudaMalloc(&d, size_t(75600) * 13824 * 2)); CK(cudaMalloc(&xs, 75600 * 4)); CK(cudaMalloc(&wsc, 13824 * 4)); CK(cudaMalloc(&bias, 13824 * 2));
  fill<<<4096, 256>>>(x, size_t(75600) * 13824, 1); fill<<<4096, 256>>>(w, size_t(13824) * 13824, 2);
  fill<<<4096, 256>>>(reinterpret_cast<uint8_t*>(d), size_t(75600) * 13824 * 2, 3); fill<<<64, 256>>>(reinterpret_cast<uint8_t*>(bias), 13824 * 2, 4);
  fillf<<<(75600 + 255) / 256, 256>>>(xs, 75600, 0.01f); fillf<<<(13824 + 255) / 256, 256>>>(wsc, 13824, 0.01f);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (const S& s : shapes) {
    cublasLtMatmulDesc_t desc; CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N; int8_t fa = 0;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof(fa)));
    int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof(mode)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof(mode)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &wsc, sizeof(void*)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &xs, sizeof(void*)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &s.epi, sizeof(s.epi)));
    int32_t bt = CUDA_R_16BF;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(void*)));
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, s.K, s.N, s.K));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, s.K, s.M, s.K));
    CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, s.N, s.M, s.N));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsz = wsb; uint32_t red = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof(wsz));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &red, sizeof(red));
    cublasLtMatmulHeuristicResult_t res[16]; int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 16, res, &found));
    const double flop = 2.0 * s.M * s.N * s.K;
    printf("%s: %d candidates\n", s.name, found);
    float alpha = 1, beta = s.resid ? 1 : 0;
    for (int i = 0; i < found; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      int tile = -1, stages = -1, splitk = -1, algo_id = -1, swz = -1, cl = -1; size_t sz;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof(int), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(int), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(int), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof(int), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof(int), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cl, sizeof(int), &sz);
      std::vector<float> t;
      bool ok = true;
      for (int r = 0; r < 9 && ok; ++r) {
        cudaEventRecord(e0);
        ok = cublasLtMatmul(h, desc, &alpha, w, la, x, lb, &beta, d, ld, d, ld, &res[i].algo, ws, res[i].workspaceSize, 0) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 2) t.push_back(ms);
      }
      if (!ok) { printf("  #%d algo %d refused\n", i, algo_id); continue; }
      std::sort(t.begin(), t.end());
      printf("  #%d algo %d tile %d stages %d splitk %d swizzle %d cluster %d ws %zu: %.3f ms %.1f TFLOP/s\n", i, algo_id, tile, stages, splitk, swz, cl,
             res[i].workspaceSize, t[3], flop / t[3] * 1e-9);
    }
    cublasLtMatmulPreferenceDestroy(pref); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld); cublasLtMatmulDescDestroy(desc);
  }
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
