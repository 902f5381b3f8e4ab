#include "kernels/gemm/gemm_fp8.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "kernels/gemm/gemm_lt_common.cuh"

namespace vgen::kern {

namespace {

using gemm_detail::align_of;
using gemm_detail::fail;
using gemm_detail::fail_cublas;
using gemm_detail::kWorkspaceBytes;
using bf16 = __nv_bfloat16;

enum class Epi : uint8_t { kNone, kBias, kGelu, kGeluBias };

struct PlanKey {
  int64_t device, M, N, K, ldx, ldw, ldd;
  GemmType dout, bias_t;
  Epi epi;
  bool outer;  // outer-vector scales in the GEMM (else scales 1, applied by the separate epilogue)
  uint8_t al_x, al_w, al_d, al_b;
  uint8_t al_c;  // alignment of the residual (C); 0: no residual
  bool operator==(const PlanKey&) const = default;
};
struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (int64_t v : {k.device, k.M, k.N, k.K, k.ldx, k.ldw, k.ldd}) mix(uint64_t(v));
    mix(uint64_t(k.dout) | uint64_t(k.bias_t) << 8 | uint64_t(k.epi) << 16 | uint64_t(k.outer) << 24 |
        uint64_t(k.al_x) << 32 | uint64_t(k.al_w) << 40 | uint64_t(k.al_d) << 48 | uint64_t(k.al_b) << 56);
    mix(k.al_c);
    return size_t(h);
  }
};

struct Plan {
  bool valid = false;  // false: cuBLASLt has no algorithm for this key, or refused it (remembered)
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

std::mutex g_mu;
std::unordered_map<PlanKey, Plan, PlanKeyHash> g_plans;
Fp8GemmStats g_stats;

cudaDataType_t cuda_type(GemmType t) { return t == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

void destroy_plan(Plan& p) {
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  p = Plan{};
}

std::string shape_str(const PlanKey& k) {
  return "M=" + std::to_string(k.M) + " N=" + std::to_string(k.N) + " K=" + std::to_string(k.K);
}

// Builds (or finds) the plan for `key`; caller holds g_mu. An invalid plan: no algorithm.
cudaError_t get_plan(const PlanKey& key, cublasLtHandle_t handle, const Fp8LinearArgs& args, Plan** out) {
  auto it = g_plans.find(key);
  if (it != g_plans.end()) {
    ++g_stats.hits;
    *out = &it->second;
    return cudaSuccess;
  }
  ++g_stats.misses;
  Plan p;
  auto check = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
      destroy_plan(p);
      return fail_cublas(st, what);
    }
    return cudaSuccess;
  };
  if (auto e = check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"))
    return e;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n, const char* what) {
    return check(cublasLtMatmulDescSetAttribute(p.desc, attr, v, n), what);
  };
  // Column-major view, the FP8 "TN" layout: D[N,M] = op(A)·B, A = w8 stored [K,N] (ld ldw)
  // transposed, B = x8 stored [K,M] (ld ldx).
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  const int8_t fast_accum = 0;  // keep the periodic promotion of partial sums to fp32
  if (auto e = set(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta), "set transa")) return e;
  if (auto e = set(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb), "set transb")) return e;
  if (auto e = set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum), "set fast accum")) return e;
  if (key.outer) {
    // A's scale vector runs along the rows of op(A) (our N), B's along the columns of B (our M).
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof(mode), "set A scale mode")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof(mode), "set B scale mode")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &args.w_scale, sizeof(void*), "set A scale")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &args.x_scale, sizeof(void*), "set B scale")) return e;
  }
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  switch (key.epi) {
    case Epi::kNone: epi = CUBLASLT_EPILOGUE_DEFAULT; break;
    case Epi::kBias: epi = CUBLASLT_EPILOGUE_BIAS; break;
    case Epi::kGelu: epi = CUBLASLT_EPILOGUE_GELU; break;
    case Epi::kGeluBias: epi = CUBLASLT_EPILOGUE_GELU_BIAS; break;
  }
  if (auto e = set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi), "set epilogue")) return e;
  if (key.epi == Epi::kBias || key.epi == Epi::kGeluBias) {
    const int32_t bt = int32_t(cuda_type(key.bias_t));
    if (auto e = set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt), "set bias type")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args.bias, sizeof(void*), "set bias")) return e;
  }
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, uint64_t(key.K), uint64_t(key.N), key.ldw),
                     "layout A"))
    return e;
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, uint64_t(key.K), uint64_t(key.M), key.ldx),
                     "layout B"))
    return e;
  if (auto e = check(cublasLtMatrixLayoutCreate(&p.d, cuda_type(key.dout), uint64_t(key.N), uint64_t(key.M), key.ldd),
                     "layout D"))
    return e;

  cublasLtMatmulPreference_t pref = nullptr;
  if (auto e = check(cublasLtMatmulPreferenceCreate(&pref), "preference")) return e;
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t al_a = key.al_w, al_b = key.al_x, al_d = key.al_d;
  const uint32_t al_c = key.al_c ? std::min(key.al_c, key.al_d) : key.al_d;  // C is read through D's layout
  // Split-K partial sums only in fp32, as gemm.cu (no atomics, no bf16 partial sums).
  const uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction, sizeof(reduction));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_SUCCESS && found > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
    p.valid = true;
    p.algo = res.algo;
    p.workspace = res.workspaceSize;
  } else {
    destroy_plan(p);  // remembered as unsupported; the caller falls back
  }
  auto ins = g_plans.emplace(key, p).first;
  g_stats.plans = g_plans.size();
  *out = &ins->second;
  return cudaSuccess;
}

// d = x8·w8ᵀ (· scales when the plan has them, + bias and activation per the plan) (+ c, beta 1).
// *refused: cuBLASLt rejected the configuration at launch (nothing was queued).
cudaError_t run_plan(cublasLtHandle_t handle, void* ws, Plan& p, const PlanKey& key, const Fp8LinearArgs& a,
                     const void* c, void* d, cudaStream_t stream, bool* refused) {
  *refused = false;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v) {
    return cublasLtMatmulDescSetAttribute(p.desc, attr, v, sizeof(void*));
  };
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  if (key.epi == Epi::kBias || key.epi == Epi::kGeluBias) s = set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a.bias);
  if (s == CUBLAS_STATUS_SUCCESS && key.outer) s = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a.w_scale);
  if (s == CUBLAS_STATUS_SUCCESS && key.outer) s = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a.x_scale);
  if (s != CUBLAS_STATUS_SUCCESS) return fail_cublas(s, "set FP8 GEMM pointers");
  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  s = cublasLtMatmul(handle, p.desc, &alpha, a.w8, p.a, a.x8, p.b, &beta, c ? c : d, p.d, d, p.d, &p.algo, ws,
                     p.workspace, stream);
  if (s == CUBLAS_STATUS_SUCCESS) return cudaSuccess;
  // The scale pointers are checked only here (cublasLt.h): a refusal drops the plan, the caller falls back.
  *refused = s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_NOT_SUPPORTED;
  if (*refused) destroy_plan(p);
  return fail_cublas(s, "cublasLtMatmul (FP8, " + shape_str(key) + ")");
}

__device__ __forceinline__ float gelu_tanh(float v) {
  const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * v * (1.0f + tanhf(k0 * (v + 0.044715f * v * v * v)));
}

// W consecutive elements of a row as fp32 (p aligned to W elements).
template <int W> __device__ __forceinline__ void load_w(const float* p, float (&v)[W]) {
  if constexpr (W == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
  } else {
    v[0] = *p;
  }
}
template <int W> __device__ __forceinline__ void load_w(const bf16* p, float (&v)[W]) {
  if constexpr (W == 4) {
    const uint2 t = *reinterpret_cast<const uint2*>(p);
    const bf16* e = reinterpret_cast<const bf16*>(&t);
    for (int c = 0; c < 4; ++c) v[c] = __bfloat162float(e[c]);
  } else {
    v[0] = __bfloat162float(*p);
  }
}
template <int W> __device__ __forceinline__ void store_w(float* p, const float (&v)[W]) {
  if constexpr (W == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}
template <int W> __device__ __forceinline__ void store_w(bf16* p, const float (&v)[W]) {
  if constexpr (W == 4) {
    uint2 t;
    bf16* e = reinterpret_cast<bf16*>(&t);
    for (int c = 0; c < 4; ++c) e[c] = __float2bfloat16_rn(v[c]);
    *reinterpret_cast<uint2*>(p) = t;
  } else {
    *p = __float2bfloat16_rn(v[0]);
  }
}

// y = act(acc (· sx[i]·sw[j] when sx) + bias) + res, one rounding to OutT; W columns per thread
// (W divides N). acc may be y (fp32, no residual) or null (K = 0); res may be y or null.
template <typename OutT, int W>
__global__ void fp8_epilogue_kernel(const float* acc, int64_t ldacc, const float* sx, const float* sw,
                                    const void* bias, bool bias_bf16, const OutT* res, OutT* y, int64_t ldy,
                                    int64_t M, int64_t N, bool gelu) {
  const int64_t nw = N / W, total = M * nw;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / nw, j = (idx - i * nw) * W;
    float v[W];
    if (acc) {
      load_w<W>(acc + i * ldacc + j, v);
      if (sx) {
        const float s = sx[i];
#pragma unroll
        for (int c = 0; c < W; ++c) v[c] = v[c] * s * sw[j + c];
      }
    } else {
#pragma unroll
      for (int c = 0; c < W; ++c) v[c] = 0.0f;
    }
    if (bias) {
#pragma unroll
      for (int c = 0; c < W; ++c)
        v[c] += bias_bf16 ? __bfloat162float(static_cast<const bf16*>(bias)[j + c])
                          : static_cast<const float*>(bias)[j + c];
    }
    if (gelu) {
#pragma unroll
      for (int c = 0; c < W; ++c) v[c] = gelu_tanh(v[c]);
    }
    if (res) {
      float r[W];
      load_w<W>(res + i * ldy + j, r);
#pragma unroll
      for (int c = 0; c < W; ++c) v[c] += r[c];
    }
    store_w<W>(y + i * ldy + j, v);
  }
}

// sx/sw: apply the scales (the GEMM ran without them), else null.
cudaError_t launch_epilogue(const float* acc, int64_t ldacc, const float* sx, const float* sw,
                            const Fp8LinearArgs& a, int64_t ldy, cudaStream_t stream) {
  const size_t out_size = a.out_type == GemmType::kF32 ? 4 : 2;
  const bool vec = a.N % 4 == 0 && ldy % 4 == 0 && align_of(a.y) >= 4 * out_size &&
                   (!a.residual || align_of(a.residual) >= 4 * out_size) &&
                   (!acc || (ldacc % 4 == 0 && align_of(acc) == 16));
  const int64_t total = a.M * (vec ? a.N / 4 : a.N);
  int64_t blocks = (total + 255) / 256;
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  const bool bias_bf16 = a.bias_type == GemmType::kBF16, gelu = a.act == GemmAct::kGeluTanh;
  auto go = [&](auto out_tag, auto w_tag) {
    using OutT = decltype(out_tag);
    constexpr int W = decltype(w_tag)::value;
    fp8_epilogue_kernel<OutT, W><<<unsigned(blocks), 256, 0, stream>>>(
        acc, ldacc, sx, sw, a.bias, bias_bf16, static_cast<const OutT*>(a.residual), static_cast<OutT*>(a.y), ldy,
        a.M, a.N, gelu);
  };
  using W1 = std::integral_constant<int, 1>;
  using W4 = std::integral_constant<int, 4>;
  if (a.out_type == GemmType::kF32)
    vec ? go(float{}, W4{}) : go(float{}, W1{});
  else
    vec ? go(bf16{}, W4{}) : go(bf16{}, W1{});
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? e : fail(e, "FP8 GEMM epilogue kernel launch");
}

}  // namespace

Fp8GemmStats gemm_fp8_stats() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_stats;
}

void gemm_fp8_release_plans() {
  std::lock_guard<std::mutex> lk(g_mu);
  for (auto& [k, p] : g_plans) destroy_plan(p);
  g_plans.clear();
  g_stats.plans = 0;
}

cudaError_t linear_fp8(const Fp8LinearArgs& a, cudaStream_t stream) {
  gemm_detail::last_error().clear();
  if (a.M < 0 || a.N < 0 || a.K < 0) return fail(cudaErrorInvalidValue, "negative FP8 GEMM dimension");
  if (a.M == 0 || a.N == 0) return cudaSuccess;
  const int64_t ldx = a.ldx ? a.ldx : a.K, ldw = a.ldw ? a.ldw : a.K, ldy = a.ldy ? a.ldy : a.N;
  if (ldx < a.K || ldw < a.K || ldy < a.N) return fail(cudaErrorInvalidValue, "FP8 GEMM leading dimension too small");
  if (!a.y || (a.K > 0 && (!a.x8 || !a.w8 || !a.x_scale || !a.w_scale)))
    return fail(cudaErrorInvalidValue, "null FP8 GEMM operand or scale");
  if (a.K > 0 && (a.K % 16 || ldx % 16 || ldw % 16 || align_of(a.x8) < 16 || align_of(a.w8) < 16))
    return fail(cudaErrorInvalidValue, "FP8 GEMM needs K, ldx and ldw multiples of 16 and 16-byte aligned x8/w8 (K=" +
                                           std::to_string(a.K) + " ldx=" + std::to_string(ldx) +
                                           " ldw=" + std::to_string(ldw) + ")");
  const bool has_bias = a.bias != nullptr, gelu = a.act == GemmAct::kGeluTanh;
  if (a.residual && gelu)
    return fail(cudaErrorInvalidValue, "an FP8 GEMM residual with an activation is not supported (cuBLASLt would "
                                       "apply GELU after adding it)");

  const bool fused_enabled = gemm_detail::fused_epilogue_enabled();  // before g_mu: gemm.cu's lock
  std::lock_guard<std::mutex> lk(g_mu);
  if (a.K == 0) {  // y = act(bias) + residual: no GEMM
    ++g_stats.unfused;
    return launch_epilogue(nullptr, 0, nullptr, nullptr, a, ldy, stream);
  }
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return fail(e, "cudaGetDevice");
  cublasLtHandle_t handle = nullptr;
  void* ws = nullptr;
  if ((e = gemm_detail::lt_resources(dev, stream, &handle, &ws)) != cudaSuccess) return e;

  PlanKey key{};
  key.device = dev;
  key.M = a.M, key.N = a.N, key.K = a.K, key.ldx = ldx, key.ldw = ldw, key.ldd = ldy;
  key.dout = a.out_type, key.bias_t = has_bias ? a.bias_type : GemmType::kF32;
  key.epi = has_bias ? (gelu ? Epi::kGeluBias : Epi::kBias) : (gelu ? Epi::kGelu : Epi::kNone);
  key.outer = true;
  key.al_x = align_of(a.x8), key.al_w = align_of(a.w8), key.al_d = align_of(a.y), key.al_b = align_of(a.bias);
  key.al_c = a.residual ? align_of(a.residual) : 0;

  // Straight into y: the plain GEMM, or a fused epilogue cuBLASLt documents for e4m3 inputs (a bf16
  // bias only; GELU only for bf16 output, its tanh being approximate).
  const bool plain = key.epi == Epi::kNone && !a.residual;
  const bool fusable = (!has_bias || a.bias_type == GemmType::kBF16) && (!gelu || a.out_type == GemmType::kBF16);
  Plan* plan = nullptr;
  bool refused = false;
  if (plain || (fused_enabled && fusable)) {
    if ((e = get_plan(key, handle, a, &plan)) != cudaSuccess) return e;
    if (plan->valid) {
      e = run_plan(handle, ws, *plan, key, a, a.residual, a.y, stream, &refused);
      if (!refused) return e;
    }
  }

  // Separate epilogue: the plain GEMM to fp32 (into y when it is fp32, aligned and holds no residual,
  // else a stream-ordered temporary with 16-byte rows), then scales (if the GEMM had none), bias,
  // activation, residual and one rounding.
  ++g_stats.unfused;
  float* acc = nullptr;
  int64_t ldacc = 0;
  const bool temp = a.out_type != GemmType::kF32 || a.residual || align_of(a.y) < 16 || ldy % 4;
  if (temp) {
    ldacc = (a.N + 3) / 4 * 4;
    e = cudaMallocAsync(reinterpret_cast<void**>(&acc), size_t(a.M) * size_t(ldacc) * sizeof(float), stream);
    if (e != cudaSuccess) return fail(e, "cudaMallocAsync of the FP8 GEMM fp32 temporary");
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
  Fp8LinearArgs plain_args = a;
  plain_args.bias = nullptr;
  e = cudaErrorNotSupported;
  for (bool outer : {true, false}) {  // outer-vector scales in the GEMM, else in the epilogue
    key.outer = outer;
    if ((e = get_plan(key, handle, plain_args, &plan)) != cudaSuccess) break;
    if (!plan->valid) {
      e = fail(cudaErrorNotSupported, "cuBLASLt has no FP8 algorithm for " + shape_str(key) +
                                          " ldx=" + std::to_string(ldx) + " ldw=" + std::to_string(ldw));
      continue;
    }
    e = run_plan(handle, ws, *plan, key, plain_args, nullptr, acc, stream, &refused);
    if (e == cudaSuccess) {
      if (!outer) ++g_stats.unscaled;
      e = launch_epilogue(acc, ldacc, outer ? nullptr : a.x_scale, outer ? nullptr : a.w_scale, a, ldy, stream);
      break;
    }
    if (!refused) break;
  }
  if (temp) {
    const cudaError_t e2 = cudaFreeAsync(acc, stream);
    if (e == cudaSuccess && e2 != cudaSuccess) e = fail(e2, "cudaFreeAsync of the FP8 GEMM fp32 temporary");
  }
  if (e == cudaSuccess) gemm_detail::last_error().clear();  // a refused or missing fused plan is no error
  return e;
}

}  // namespace vgen::kern
