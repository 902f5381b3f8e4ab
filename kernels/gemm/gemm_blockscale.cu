#include "kernels/gemm/gemm_blockscale.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "kernels/gemm/gemm_lt_common.cuh"
#include "kernels/gemm/lt_plan.cuh"

namespace vgen::kern {
namespace {

using gemm_detail::align_of;
using gemm_detail::fail;
using gemm_detail::fail_cublas;
using gemm_detail::lt_shape_str;
using gemm_detail::LtPlan;
using gemm_detail::LtPlanCache;
using gemm_detail::LtPlanKey;

std::mutex g_mu;  // serialises the use of a plan (the launch rewrites its scale pointers)
LtPlanCache g_plans;

// The scale mode's attributes and the scale pointers (A: w's, B: x's).
cudaError_t set_scales(cublasLtMatmulDesc_t desc, const LtPlanKey& key, const BlockScaledLinearArgs& a) {
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n, const char* what) {
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, v, n);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : fail_cublas(s, what);
  };
  const int32_t am = key.a_scale_mode, bm = key.b_scale_mode;
  if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &am, sizeof(am), "set A scale mode")) return e;
  if (auto e = set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &bm, sizeof(bm), "set B scale mode")) return e;
  if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a.w_sf, sizeof(void*), "set A scale")) return e;
  return set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a.x_sf, sizeof(void*), "set B scale");
}

LtPlanKey make_key(int dev, const BlockScaledLinearArgs& a, const float* acc) {
  const bool fp4 = a.format == BlockFormat::kNvfp4;
  const cudaDataType_t t = fp4 ? CUDA_R_4F_E2M1 : CUDA_R_8F_E4M3;
  LtPlanKey key;
  key.device = dev;
  key.a = {t, a.Kp, a.N, a.Kp, align_of(a.w)};
  key.b = {t, a.Kp, a.M, a.Kp, align_of(a.x)};
  key.d = {CUDA_R_32F, a.N, a.M, a.N, align_of(acc)};
  key.a_scale_mode = key.b_scale_mode =
      fp4 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
  return key;
}

// y = acc · alpha · row[i] + bias[j], one rounding to OutT.
template <typename OutT>
__global__ void blockscale_epilogue_kernel(const float* acc, float alpha, const float* row, const float* bias, OutT* y,
                                           int64_t M, int64_t N) {
  const int64_t total = M * N;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / N, j = idx % N;
    float v = acc[idx] * alpha;
    if (row) v *= row[i];
    if (bias) v += bias[j];
    if constexpr (sizeof(OutT) == 2) y[idx] = __float2bfloat16_rn(v);
    else y[idx] = v;
  }
}

cudaError_t run(const BlockScaledLinearArgs& a, float* acc, cudaStream_t stream) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return fail(e, "cudaGetDevice");
  cublasLtHandle_t handle = nullptr;
  void* ws = nullptr;
  if ((e = gemm_detail::lt_resources(dev, stream, &handle, &ws)) != cudaSuccess) return e;
  const LtPlanKey key = make_key(dev, a, acc);
  std::lock_guard<std::mutex> lk(g_mu);
  LtPlan* p = nullptr;
  e = g_plans.get(handle, key, true, [&](cublasLtMatmulDesc_t d) { return set_scales(d, key, a); }, &p);
  if (e != cudaSuccess) return e;
  if ((e = set_scales(p->desc, key, a)) != cudaSuccess) return e;  // this call's scale pointers
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t s = cublasLtMatmul(handle, p->desc, &one, a.w, p->a, a.x, p->b, &zero, acc, p->d, acc, p->d,
                                          &p->algo, ws, p->workspace, stream);
  return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : fail_cublas(s, "cublasLtMatmul (block-scaled, " + lt_shape_str(key) + ")");
}

}  // namespace

void gemm_blockscale_release_plans() {
  std::lock_guard<std::mutex> lk(g_mu);
  g_plans.clear();
}

bool blockscale_gemm_supported() {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
  return major == 10 || major == 12;
}

cudaError_t linear_blockscale(const BlockScaledLinearArgs& a, cudaStream_t stream) {
  gemm_detail::last_error().clear();
  if (a.M < 0 || a.N < 0 || a.Kp < 0 || a.Kp % 32)
    return fail(cudaErrorInvalidValue, "block-scaled GEMM needs Kp a multiple of 32, got " + std::to_string(a.Kp));
  if (a.M == 0 || a.N == 0) return cudaSuccess;
  if (!a.y || (a.Kp > 0 && (!a.x || !a.w || !a.x_sf || !a.w_sf)) || align_of(a.x) < 16 || align_of(a.w) < 16)
    return fail(cudaErrorInvalidValue, "block-scaled GEMM: a null or unaligned operand");
  if (!blockscale_gemm_supported())
    return fail(cudaErrorNotSupported, "block-scaled GEMM: needs compute capability 10.x or 12.x");
  float* acc = nullptr;
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&acc), size_t(a.M) * size_t(a.N) * sizeof(float), stream);
  if (e != cudaSuccess) return fail(e, "cudaMallocAsync of the block-scaled GEMM's fp32 temporary");
  e = a.Kp > 0 ? run(a, acc, stream) : cudaMemsetAsync(acc, 0, size_t(a.M) * size_t(a.N) * sizeof(float), stream);
  if (e == cudaSuccess) {
    const int64_t total = a.M * a.N;
    const unsigned blocks = unsigned(std::min<int64_t>((total + 255) / 256, 65535 * 16));
    if (a.out_type == GemmType::kF32)
      blockscale_epilogue_kernel<float><<<blocks, 256, 0, stream>>>(acc, a.alpha, a.row_scale, a.bias,
                                                                    static_cast<float*>(a.y), a.M, a.N);
    else
      blockscale_epilogue_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(
          acc, a.alpha, a.row_scale, a.bias, static_cast<__nv_bfloat16*>(a.y), a.M, a.N);
    e = cudaGetLastError();
    if (e != cudaSuccess) fail(e, "block-scaled GEMM epilogue kernel launch");
  }
  const cudaError_t e2 = cudaFreeAsync(acc, stream);
  return e != cudaSuccess ? e : e2 != cudaSuccess ? fail(e2, "cudaFreeAsync of the block-scaled GEMM temporary") : e;
}

}  // namespace vgen::kern
