#include "kernels/gemm/gemm.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/gemm/gemm_lt_common.cuh"

namespace vgen::kern {

namespace {

using gemm_detail::align_of;
using gemm_detail::fail;
using gemm_detail::fail_cublas;
using gemm_detail::kWorkspaceBytes;

thread_local std::string t_last_error;

enum class Epi : uint8_t { kNone, kBias, kGelu, kGeluBias };

struct PlanKey {
  int64_t device, M, N, K, ldx, ldw, ldd;
  GemmType in, dout, bias_t;
  Epi epi;
  uint8_t al_x, al_w, al_d, al_b;
  uint8_t al_c;  // alignment of the residual (C); 0: no residual
  bool operator==(const PlanKey& o) const {
    return device == o.device && M == o.M && N == o.N && K == o.K && ldx == o.ldx && ldw == o.ldw && ldd == o.ldd &&
           in == o.in && dout == o.dout && bias_t == o.bias_t && epi == o.epi && al_x == o.al_x && al_w == o.al_w &&
           al_d == o.al_d && al_b == o.al_b && al_c == o.al_c;
  }
};
struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (int64_t v : {k.device, k.M, k.N, k.K, k.ldx, k.ldw, k.ldd}) mix(uint64_t(v));
    mix(uint64_t(k.in) | uint64_t(k.dout) << 8 | uint64_t(k.bias_t) << 16 | uint64_t(k.epi) << 24 |
        uint64_t(k.al_x) << 32 | uint64_t(k.al_w) << 40 | uint64_t(k.al_d) << 48 | uint64_t(k.al_b) << 56);
    mix(k.al_c);
    return size_t(h);
  }
};

struct Plan {
  bool valid = false;  // false: cuBLASLt has no algorithm for this key (remembered)
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

struct DeviceRes {
  cublasLtHandle_t handle = nullptr;
  std::map<cudaStream_t, void*> workspaces;
};

std::mutex g_mu;
std::unordered_map<PlanKey, Plan, PlanKeyHash> g_plans;
std::vector<DeviceRes> g_devs;
GemmCacheStats g_stats;
bool g_fused_enabled = true;

cudaDataType_t cuda_type(GemmType t) { return t == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

void destroy_plan(Plan& p) {
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  p = Plan{};
}

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

// Builds (or finds) the plan for `key`; caller holds g_mu. Returns an invalid plan when cuBLASLt
// offers no algorithm (e.g. an epilogue it does not support for these types).
cudaError_t get_plan(const PlanKey& key, cublasLtHandle_t handle, const void* bias, Plan** out) {
  auto it = g_plans.find(key);
  if (it != g_plans.end()) {
    ++g_stats.hits;
    *out = &it->second;
    return cudaSuccess;
  }
  ++g_stats.misses;
  Plan p;
  cublasStatus_t s;
  auto check = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
      destroy_plan(p);
      return fail_cublas(st, what);
    }
    return cudaSuccess;
  };
  if (auto e = check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"))
    return e;
  // Column-major view: D[N,M] = op(A)·B with A = w stored [K,N] (ld ldw) transposed, B = x stored [K,M].
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  switch (key.epi) {
    case Epi::kNone: epi = CUBLASLT_EPILOGUE_DEFAULT; break;
    case Epi::kBias: epi = CUBLASLT_EPILOGUE_BIAS; break;
    case Epi::kGelu: epi = CUBLASLT_EPILOGUE_GELU; break;
    case Epi::kGeluBias: epi = CUBLASLT_EPILOGUE_GELU_BIAS; break;
  }
  if (auto e = check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)),
                     "set epilogue"))
    return e;
  if (key.epi == Epi::kBias || key.epi == Epi::kGeluBias) {
    int32_t bt = int32_t(cuda_type(key.bias_t));
    if (auto e = check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)),
                       "set bias type"))
      return e;
    // The heuristic reads the pointer's alignment.
    if (auto e = check(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
                       "set bias pointer"))
      return e;
  }
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.a, cuda_type(key.in), uint64_t(key.K), uint64_t(key.N), key.ldw),
                     "layout A"))
    return e;
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.b, cuda_type(key.in), uint64_t(key.K), uint64_t(key.M), key.ldx),
                     "layout B"))
    return e;
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.d, cuda_type(key.dout), uint64_t(key.N), uint64_t(key.M), key.ldd),
                     "layout D"))
    return e;

  cublasLtMatmulPreference_t pref = nullptr;
  if (auto e = check(cublasLtMatmulPreferenceCreate(&pref), "preference")) return e;
  uint64_t ws = kWorkspaceBytes;
  uint32_t al_a = key.al_w, al_b = key.al_x, al_d = key.al_d;
  uint32_t al_c = key.al_c ? std::min(key.al_c, key.al_d) : key.al_d;  // C is read through D's layout
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  // Split-K partial sums only in fp32 (the compute type), reduced in a fixed order: no in-place
  // (atomic, output-type) or output-type reductions, which would round partial sums to bf16.
  uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction, sizeof(reduction));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  s = cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_SUCCESS && found > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
    p.valid = true;
    p.algo = res.algo;
    p.workspace = res.workspaceSize;
  } else if (key.epi == Epi::kNone && key.al_c == 0) {
    // A plain GEMM must always have an algorithm; report why not.
    destroy_plan(p);
    return fail_cublas(s == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_NOT_SUPPORTED : s,
                       "cublasLtMatmulAlgoGetHeuristic (M=" + std::to_string(key.M) + " N=" + std::to_string(key.N) +
                           " K=" + std::to_string(key.K) + ")");
  } else {
    destroy_plan(p);  // remembered as unsupported; the caller falls back to the separate epilogue
  }
  auto ins = g_plans.emplace(key, p).first;
  g_stats.plans = g_plans.size();
  *out = &ins->second;
  return cudaSuccess;
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
cudaError_t run_plan(DeviceRes& r, void* ws, Plan& p, const void* x, const void* w, const void* bias, const void* c,
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
  return g_stats;
}

void gemm_release_resources() {
  std::lock_guard<std::mutex> lk(g_mu);
  int cur = 0;
  cudaGetDevice(&cur);
  for (auto& [k, p] : g_plans) destroy_plan(p);
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
  g_stats.plans = 0;
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
    ++g_stats.unfused;
    return launch_bias_act(nullptr, 0, a, ldy, stream);
  }
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return fail(e, "cudaGetDevice");
  DeviceRes* r = nullptr;
  void* ws = nullptr;
  if ((e = device_res(dev, stream, &r, &ws)) != cudaSuccess) return e;

  PlanKey key{};
  key.device = dev;
  key.M = a.M, key.N = a.N, key.K = a.K, key.ldx = ldx, key.ldw = ldw, key.ldd = ldy;
  key.in = a.in_type, key.dout = a.out_type, key.bias_t = has_bias ? a.bias_type : GemmType::kF32;
  key.epi = has_bias ? (gelu ? Epi::kGeluBias : Epi::kBias) : (gelu ? Epi::kGelu : Epi::kNone);
  key.al_x = align_of(a.x), key.al_w = align_of(a.w), key.al_d = align_of(a.y), key.al_b = align_of(a.bias);
  key.al_c = a.residual ? align_of(a.residual) : 0;

  Plan* plan = nullptr;
  // Bias and GELU run in cuBLASLt's epilogue where it has an algorithm. A bf16 bias with bf16 output
  // may be added to the product already rounded to bf16 (seen on the H200) - the epilogue PyTorch's
  // addmm runs for diffusers' bf16 Linear layers. GELU-tanh is fused only for bf16 inputs and output:
  // cuBLASLt's tanh is an approximation (within 5e-4·|v|, below the bf16 output's rounding), too
  // coarse for precision fp32. cuBLASLt offers no fp32-bias/bf16-out kernel: an fp32 bias takes the
  // separate epilogue below (one rounding, ~2x the memory traffic).
  const bool fuse_gelu = a.in_type == GemmType::kBF16 && a.out_type == GemmType::kBF16;
  if ((key.epi == Epi::kNone && !a.residual) || (g_fused_enabled && (!gelu || fuse_gelu))) {
    if ((e = get_plan(key, r->handle, a.bias, &plan)) != cudaSuccess) return e;
    if (plan->valid) return run_plan(*r, ws, *plan, a.x, a.w, a.bias, a.residual, a.y, has_bias, a.alpha, stream);
  }

  // Separate epilogue: plain GEMM to fp32 (into y when it is fp32 and holds no residual, else a
  // stream-ordered temporary), then bias + activation + residual + rounding.
  ++g_stats.unfused;
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
  key.epi = Epi::kNone;
  key.dout = GemmType::kF32;
  key.bias_t = GemmType::kF32;
  key.ldd = ldacc;
  key.al_d = align_of(acc);
  key.al_b = 16;
  key.al_c = 0;
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
