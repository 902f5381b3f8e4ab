#include "kernels/gemm/gemm.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/gemm/gemm_lt_common.cuh"
#include "kernels/gemm/lt_plan.cuh"

namespace vgen::kern {

namespace {

using gemm_detail::align_of;
using gemm_detail::fail;
using gemm_detail::fail_cublas;
using gemm_detail::kWorkspaceBytes;
using gemm_detail::lt_epilogue;
using gemm_detail::lt_set_epilogue;
using gemm_detail::LtPlan;
using gemm_detail::LtPlanCache;
using gemm_detail::LtPlanCacheStats;
using gemm_detail::LtPlanKey;

thread_local std::string t_last_error;

struct DeviceRes {
  cublasLtHandle_t handle = nullptr;
  std::map<cudaStream_t, void*> workspaces;
};

std::mutex g_mu;  // also serialises the use of a plan (run_plan rewrites its bias pointer)
LtPlanCache g_plans;
std::vector<DeviceRes> g_devs;
uint64_t g_unfused = 0;
bool g_fused_enabled = true;

cudaDataType_t cuda_type(GemmType t) { return t == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

// Caller holds g_mu.
cudaError_t device_res(int dev, cudaStream_t stream, DeviceRes** out, void** ws) {
  if (size_t(dev) >= g_devs.size()) g_devs.resize(size_t(dev) + 1);
  DeviceRes& r = g_devs[size_t(dev)];
  if (!r.handle) {
    cublasStatus_t s = cublasLtCreate(&r.handle);
    if (s != CUBLAS_STATUS_SUCCESS) return fail_cublas(s, "cublasLtCreate");
  }
  auto it = r.workspaces.find(stream);
  if (it == r.workspaces.end()) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, kWorkspaceBytes);
    if (e != cudaSuccess) return fail(e, "cudaMalloc of the cuBLASLt workspace");
    it = r.workspaces.emplace(stream, p).first;
  }
  *out = &r;
  *ws = it->second;
  return cudaSuccess;
}

// Finds (or builds) the plan for `key`; caller holds g_mu. An invalid plan: cuBLASLt offers no
// algorithm (e.g. an epilogue it does not support for these types); a plain GEMM must have one.
cudaError_t get_plan(const LtPlanKey& key, cublasLtHandle_t handle, const void* bias, LtPlan** out) {
  const bool plain = key.epilogue == CUBLASLT_EPILOGUE_DEFAULT && key.align_c == 0;
  return g_plans.get(handle, key, plain, [&](cublasLtMatmulDesc_t desc) { return lt_set_epilogue(desc, key, bias); },
                     out);
}

// The key of y[M,N] = x[M,K]·w[N,K]ᵀ: A = w stored [K,N] (ld ldw) transposed, B = x stored [K,M].
LtPlanKey make_key(int dev, const LinearArgs& a, int64_t ldx, int64_t ldw, int64_t ldy) {
  const bool has_bias = a.bias != nullptr;
  LtPlanKey key;
  key.device = dev;
  key.a = {cuda_type(a.in_type), a.K, a.N, ldw, align_of(a.w)};
  key.b = {cuda_type(a.in_type), a.K, a.M, ldx, align_of(a.x)};
  key.d = {cuda_type(a.out_type), a.N, a.M, ldy, align_of(a.y)};
  key.align_c = a.residual ? align_of(a.residual) : 0;
  key.epilogue = lt_epilogue(has_bias, a.act == GemmAct::kGeluTanh);
  key.bias_type = cuda_type(has_bias ? a.bias_type : GemmType::kF32);
  key.align_bias = align_of(a.bias);
  return key;
}

__device__ __forceinline__ float gelu_tanh(float v) {
  const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * v * (1.0f + tanhf(k0 * (v + 0.044715f * v * v * v)));
}

// y = act(acc + bias) + res with one rounding to OutT. acc may alias y (fp32 output, no residual) or
// be null (K = 0); res (row stride ldy) may be y or null.
template <typename OutT>
__global__ void bias_act_kernel(const float* acc, int64_t ldacc, const void* bias, bool bias_bf16, const OutT* res,
                                OutT* y, int64_t ldy, int64_t M, int64_t N, bool gelu) {
  const int64_t total = M * N;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / N, j = idx - i * N;
    float v = acc ? acc[i * ldacc + j] : 0.0f;
    if (bias)
      v += bias_bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(bias)[j]) : static_cast<const float*>(bias)[j];
    if (gelu) v = gelu_tanh(v);
    if constexpr (sizeof(OutT) == 4) {
      if (res) v += res[i * ldy + j];
      y[i * ldy + j] = v;
    } else {
      if (res) v += __bfloat162float(res[i * ldy + j]);
      y[i * ldy + j] = __float2bfloat16_rn(v);
    }
  }
}

cudaError_t launch_bias_act(const float* acc, int64_t ldacc, const LinearArgs& a, int64_t ldy, cudaStream_t stream) {
  const int64_t total = a.M * a.N;
  int64_t blocks = (total + 255) / 256;
  if (blocks > 65535 * 4) blocks = 65535 * 4;
  const bool bias_bf16 = a.bias_type == GemmType::kBF16, gelu = a.act == GemmAct::kGeluTanh;
  if (a.out_type == GemmType::kF32)
    bias_act_kernel<float><<<unsigned(blocks), 256, 0, stream>>>(acc, ldacc, a.bias, bias_bf16,
                                                                static_cast<const float*>(a.residual),
                                                                static_cast<float*>(a.y), ldy, a.M, a.N, gelu);
  else
    bias_act_kernel<__nv_bfloat16><<<unsigned(blocks), 256, 0, stream>>>(
        acc, ldacc, a.bias, bias_bf16, static_cast<const __nv_bfloat16*>(a.residual), static_cast<__nv_bfloat16*>(a.y),
        ldy, a.M, a.N, gelu);
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? e : fail(e, "bias/activation kernel launch");
}

// d = alpha·x·wᵀ (+ bias, activation per the plan) (+ c: cuBLASLt's C with beta 1, read through D's layout).
cudaError_t run_plan(DeviceRes& r, void* ws, LtPlan& p, const void* x, const void* w, const void* bias, const void* c,
                     void* d, bool has_bias, float alpha, cudaStream_t stream) {
  if (has_bias) {
    cublasStatus_t s = cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    if (s != CUBLAS_STATUS_SUCCESS) return fail_cublas(s, "set bias pointer");
  }
  const float beta = c ? 1.0f : 0.0f;
  cublasStatus_t s = cublasLtMatmul(r.handle, p.desc, &alpha, w, p.a, x, p.b, &beta, c ? c : d, p.d, d, p.d, &p.algo,
                                    ws, p.workspace, stream);
  return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : fail_cublas(s, "cublasLtMatmul");
}

}  // namespace

namespace gemm_detail {

std::string& last_error() { return t_last_error; }

bool fused_epilogue_enabled() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_fused_enabled;
}

cudaError_t lt_resources(int dev, cudaStream_t stream, cublasLtHandle_t* handle, void** workspace) {
  std::lock_guard<std::mutex> lk(g_mu);
  DeviceRes* r = nullptr;
  cudaError_t e = device_res(dev, stream, &r, workspace);
  if (e == cudaSuccess) *handle = r->handle;
  return e;
}

}  // namespace gemm_detail

const char* gemm_last_error() { return t_last_error.c_str(); }

void gemm_set_fused_epilogue(bool enabled) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_fused_enabled = enabled;
}

GemmCacheStats gemm_cache_stats() {
  std::lock_guard<std::mutex> lk(g_mu);
  const LtPlanCacheStats c = g_plans.stats();
  GemmCacheStats s;
  s.plans = c.plans, s.hits = c.hits, s.misses = c.misses, s.unfused = g_unfused;
  return s;
}

void gemm_release_resources() {
  std::lock_guard<std::mutex> lk(g_mu);
  int cur = 0;
  cudaGetDevice(&cur);
  g_plans.clear();
  for (size_t dev = 0; dev < g_devs.size(); ++dev) {
    DeviceRes& r = g_devs[dev];
    if (!r.handle && r.workspaces.empty()) continue;
    cudaSetDevice(int(dev));
    cudaDeviceSynchronize();
    for (auto& [s, p] : r.workspaces) cudaFree(p);
    r.workspaces.clear();
    if (r.handle) cublasLtDestroy(r.handle);
    r.handle = nullptr;
  }
  cudaSetDevice(cur);
}

cudaError_t linear(const LinearArgs& a, cudaStream_t stream) {
  t_last_error.clear();
  if (a.M < 0 || a.N < 0 || a.K < 0) return fail(cudaErrorInvalidValue, "negative GEMM dimension");
  if (a.M == 0 || a.N == 0) return cudaSuccess;
  const int64_t ldx = a.ldx ? a.ldx : a.K, ldw = a.ldw ? a.ldw : a.K, ldy = a.ldy ? a.ldy : a.N;
  if (ldx < a.K || ldw < a.K || ldy < a.N) return fail(cudaErrorInvalidValue, "GEMM leading dimension too small");
  if (!a.y || (a.K > 0 && (!a.x || !a.w))) return fail(cudaErrorInvalidValue, "null GEMM operand");
  if (a.in_type == GemmType::kF32 &&
      (a.out_type != GemmType::kF32 || (a.bias && a.bias_type != GemmType::kF32)))
    return fail(cudaErrorInvalidValue, "fp32 GEMM inputs need fp32 output and bias");
  const bool has_bias = a.bias != nullptr, gelu = a.act == GemmAct::kGeluTanh;
  if (a.residual && gelu)
    return fail(cudaErrorInvalidValue, "a GEMM residual with an activation is not supported (cuBLASLt would apply "
                                       "GELU after adding it)");

  std::lock_guard<std::mutex> lk(g_mu);
  if (a.K == 0) {  // y = act(bias): no GEMM
    ++g_unfused;
    return launch_bias_act(nullptr, 0, a, ldy, stream);
  }
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return fail(e, "cudaGetDevice");
  DeviceRes* r = nullptr;
  void* ws = nullptr;
  if ((e = device_res(dev, stream, &r, &ws)) != cudaSuccess) return e;

  LtPlanKey key = make_key(dev, a, ldx, ldw, ldy);
  LtPlan* plan = nullptr;
  // Bias and GELU run in cuBLASLt's epilogue where it has an algorithm. A bf16 bias with bf16 output
  // may be added to the product already rounded to bf16 (seen on the H200) - the epilogue PyTorch's
  // addmm runs for diffusers' bf16 Linear layers. GELU-tanh is fused only for bf16 inputs and output:
  // cuBLASLt's tanh is an approximation (within 5e-4·|v|, below the bf16 output's rounding), too
  // coarse for precision fp32. cuBLASLt offers no fp32-bias/bf16-out kernel: an fp32 bias takes the
  // separate epilogue below (one rounding, ~2x the memory traffic).
  const bool fuse_gelu = a.in_type == GemmType::kBF16 && a.out_type == GemmType::kBF16;
  if ((key.epilogue == CUBLASLT_EPILOGUE_DEFAULT && !a.residual) || (g_fused_enabled && (!gelu || fuse_gelu))) {
    if ((e = get_plan(key, r->handle, a.bias, &plan)) != cudaSuccess) return e;
    if (plan->valid) return run_plan(*r, ws, *plan, a.x, a.w, a.bias, a.residual, a.y, has_bias, a.alpha, stream);
  }

  // Separate epilogue: plain GEMM to fp32 (into y when it is fp32 and holds no residual, else a
  // stream-ordered temporary), then bias + activation + residual + rounding.
  ++g_unfused;
  float* acc = nullptr;
  int64_t ldacc = 0;
  bool temp = a.out_type != GemmType::kF32 || a.residual;
  if (temp) {
    e = cudaMallocAsync(reinterpret_cast<void**>(&acc), size_t(a.M) * size_t(a.N) * sizeof(float), stream);
    if (e != cudaSuccess) return fail(e, "cudaMallocAsync of the GEMM fp32 temporary");
    ldacc = a.N;
  } else {
    acc = static_cast<float*>(a.y);
    ldacc = ldy;
  }
  key.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  key.d = {CUDA_R_32F, a.N, a.M, ldacc, align_of(acc)};
  key.bias_type = CUDA_R_32F;
  key.align_bias = 16;
  key.align_c = 0;
  e = get_plan(key, r->handle, nullptr, &plan);
  if (e == cudaSuccess) e = run_plan(*r, ws, *plan, a.x, a.w, nullptr, nullptr, acc, false, a.alpha, stream);
  if (e == cudaSuccess) e = launch_bias_act(acc, ldacc, a, ldy, stream);
  if (temp) {
    cudaError_t e2 = cudaFreeAsync(acc, stream);
    if (e == cudaSuccess && e2 != cudaSuccess) e = fail(e2, "cudaFreeAsync of the GEMM fp32 temporary");
  }
  return e;
}

}  // namespace vgen::kern
