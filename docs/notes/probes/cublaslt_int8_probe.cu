// Build and run on the GPU machine:
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/lt_int8 docs/notes/probes/cublaslt_int8_probe.cu -lcublasLt && /tmp/lt_int8
// Probe: can cuBLASLt run the INT8 W8A8 block linear the way vgen's e4m3 GEMMs run (docs/notes/fp8_notes.md,
// "INT8 GEMMs: the way there"): s8 weight [N, K] and s8 activation [M, K], s32 accumulation, the per-output-
// channel and per-token fp32 scales applied in the epilogue (OUTER_VEC_32F), bf16 out? For each
// combination of output type, scale type, compute type and scale mode it prints whether a heuristic
// algorithm exists, whether the matmul runs, its relative error against a double-precision host
// reference at a small odd shape, and, for those that work, TOPS at the 720p block shape
// (75,600 × 5,120 × 5,120). One JSON line per combination.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

struct Combo {
  const char* name;
  cudaDataType_t d_type;
  cudaDataType_t scale_type;
  cublasComputeType_t compute;
  bool outer_vec;
};

const char* type_name(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_32F: return "f32";
    case CUDA_R_32I: return "s32";
    case CUDA_R_8I: return "s8";
    default: return "?";
  }
}

size_t type_bytes(cudaDataType_t t) { return t == CUDA_R_16BF ? 2 : t == CUDA_R_8I ? 1 : 4; }

double read_out(const std::vector<uint8_t>& d, cudaDataType_t t, size_t i) {
  if (t == CUDA_R_16BF) return double(__bfloat162float(reinterpret_cast<const __nv_bfloat16*>(d.data())[i]));
  if (t == CUDA_R_32F) return double(reinterpret_cast<const float*>(d.data())[i]);
  if (t == CUDA_R_32I) return double(reinterpret_cast<const int32_t*>(d.data())[i]);
  return double(reinterpret_cast<const int8_t*>(d.data())[i]);
}

struct Result {
  int found = 0;
  cublasStatus_t heuristic = CUBLAS_STATUS_SUCCESS, run = CUBLAS_STATUS_NOT_SUPPORTED;
  double rel_err = -1, tops = -1;
};

// y[m, n] = (outer_vec ? sw[n]·sx[m] : 1) · Σ_k x[m, k]·w[n, k], in cuBLAS's column-major view:
// A = w as K × N (op T), B = x as K × M (op N), D = N × M (= row-major [M, N]).
Result try_combo(cublasLtHandle_t lt, const Combo& c, int M, int N, int K, bool time_it, void* ws, size_t ws_bytes) {
  Result r;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> sc(0.001f, 0.01f);
  std::vector<int8_t> hx(size_t(M) * K), hw(size_t(N) * K);
  std::vector<float> hsx(M), hsw(N);
  for (auto& v : hx) v = int8_t(q(rng));  // random in the timing too: the clocks under the power cap follow the data
  for (auto& v : hw) v = int8_t(q(rng));
  for (auto& v : hsx) v = sc(rng);
  for (auto& v : hsw) v = sc(rng);
  int8_t *x = nullptr, *w = nullptr;
  float *sx = nullptr, *sw = nullptr;
  void* d = nullptr;
  cudaMalloc(&x, hx.size());
  cudaMalloc(&w, hw.size());
  cudaMalloc(&sx, M * sizeof(float));
  cudaMalloc(&sw, N * sizeof(float));
  cudaMalloc(&d, size_t(M) * N * type_bytes(c.d_type));
  cudaMemcpy(x, hx.data(), hx.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(w, hw.data(), hw.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(sx, hsx.data(), M * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(sw, hsw.data(), N * sizeof(float), cudaMemcpyHostToDevice);

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heur{};
  cublasLtMatmulDescCreate(&desc, c.compute, c.scale_type);
  const cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof(tA));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof(tB));
  if (c.outer_vec) {
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof(mode));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof(mode));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sw, sizeof(sw));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sx, sizeof(sx));
  }
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, K, N, K);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, K, M, K);
  cublasLtMatrixLayoutCreate(&ld, c.d_type, N, M, N);
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
  r.heuristic = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &heur, &r.found);
  if (r.heuristic == CUBLAS_STATUS_SUCCESS && r.found > 0) {
    const float alpha_f = 1.0f, beta_f = 0.0f;
    const int32_t alpha_i = 1, beta_i = 0;
    const void* alpha = c.scale_type == CUDA_R_32I ? static_cast<const void*>(&alpha_i) : &alpha_f;
    const void* beta = c.scale_type == CUDA_R_32I ? static_cast<const void*>(&beta_i) : &beta_f;
    auto run = [&] { return cublasLtMatmul(lt, desc, alpha, w, la, x, lb, beta, d, ld, d, ld, &heur.algo, ws, ws_bytes, 0); };
    r.run = run();
    cudaError_t e = cudaDeviceSynchronize();
    if (r.run == CUBLAS_STATUS_SUCCESS && e == cudaSuccess && !time_it) {
      std::vector<uint8_t> hd(size_t(M) * N * type_bytes(c.d_type));
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      double num = 0, den = 0;
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double acc = 0;
          for (int k = 0; k < K; ++k) acc += double(hx[size_t(m) * K + k]) * double(hw[size_t(n) * K + k]);
          const double ref = c.outer_vec ? acc * double(hsw[n]) * double(hsx[m]) : acc;
          const double got = read_out(hd, c.d_type, size_t(m) * N + n);
          num += (got - ref) * (got - ref);
          den += ref * ref;
        }
      r.rel_err = std::sqrt(num / (den > 0 ? den : 1));
    } else if (r.run == CUBLAS_STATUS_SUCCESS && e == cudaSuccess) {
      cudaEvent_t a, b;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      for (int i = 0; i < 3; ++i) run();
      cudaEventRecord(a);
      const int reps = 10;
      for (int i = 0; i < reps; ++i) run();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      r.tops = 2.0 * M * N * K / (ms / reps * 1e-3) / 1e12;
    } else if (e != cudaSuccess) {
      std::printf("# cuda error %s\n", cudaGetErrorString(e));
    }
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(x);
  cudaFree(w);
  cudaFree(sx);
  cudaFree(sw);
  cudaFree(d);
  return r;
}

}  // namespace

int main() {
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::printf("{\"error\": \"cublasLtCreate\"}\n");
    return 1;
  }
  const size_t ws_bytes = size_t(64) << 20;
  void* ws = nullptr;
  cudaMalloc(&ws, ws_bytes);
  const Combo combos[] = {
      {"bf16 out, outer-vector scales", CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32I, true},
      {"f32 out, outer-vector scales", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32I, true},
      {"s8 out, outer-vector scales", CUDA_R_8I, CUDA_R_32F, CUBLAS_COMPUTE_32I, true},
      {"s32 out, outer-vector scales", CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, true},
      {"bf16 out, scalar", CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32I, false},
      {"f32 out, scalar", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32I, false},
      {"s8 out, scalar (f32 alpha)", CUDA_R_8I, CUDA_R_32F, CUBLAS_COMPUTE_32I, false},
      {"s32 out, scalar (the plain IMMA GEMM)", CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, false},
  };
  int ver = 0;
  cudaRuntimeGetVersion(&ver);
  std::printf("# cuBLASLt %zu, CUDA runtime %d\n", cublasLtGetVersion(), ver);
  for (const Combo& c : combos) {
    // Odd M (tokens) for the check; K and N multiples of 16 as the block linears have.
    const Result s = try_combo(lt, c, 301, 384, 512, false, ws, ws_bytes);
    Result t;
    if (s.run == CUBLAS_STATUS_SUCCESS && s.found > 0) t = try_combo(lt, c, 75600, 5120, 5120, true, ws, ws_bytes);
    std::printf(
        "{\"combo\": \"%s\", \"d\": \"%s\", \"scale_type\": \"%s\", \"outer_vec\": %s, \"heuristic_status\": %d, "
        "\"algos_found\": %d, \"run_status\": %d, \"rel_err_vs_double\": %.3e, \"tops_75600x5120x5120\": %.1f}\n",
        c.name, type_name(c.d_type), type_name(c.scale_type), c.outer_vec ? "true" : "false", int(s.heuristic),
        s.found, int(s.run), s.rel_err, t.tops);
  }
  cudaFree(ws);
  cublasLtDestroy(lt);
  return 0;
}
