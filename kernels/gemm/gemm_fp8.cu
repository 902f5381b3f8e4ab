#include "kernels/gemm/gemm_fp8.cuh"

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <mutex>
#include <string>
#include <type_traits>

#include "kernels/gemm/gemm_lt_common.cuh"
#include "kernels/gemm/lt_plan.cuh"

namespace vgen::kern {

namespace {

using gemm_detail::align_of;
using gemm_detail::fail;
using gemm_detail::fail_cublas;
using gemm_detail::kLtNoScaleMode;
using gemm_detail::lt_epilogue;
using gemm_detail::lt_epilogue_has_bias;
using gemm_detail::lt_plan_destroy;
using gemm_detail::lt_set_epilogue;
using gemm_detail::lt_shape_str;
using gemm_detail::LtPlan;
using gemm_detail::LtPlanCache;
using gemm_detail::LtPlanCacheStats;
using gemm_detail::LtPlanKey;
using bf16 = __nv_bfloat16;

std::mutex g_mu;  // also serialises the use of a plan (run_plan rewrites its pointers)
LtPlanCache g_plans;
uint64_t g_unfused = 0, g_unscaled = 0;

cudaDataType_t cuda_type(GemmType t) { return t == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF; }

constexpr int32_t kOuterVec = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;  // one fp32 scale per row of A / column of B

bool has_scales(const LtPlanKey& key) { return key.a_scale_mode != kLtNoScaleMode; }

// The e4m3 attributes: fast accumulation off (keeps the periodic promotion of partial sums to fp32),
// the outer-vector scales where the key has them (A's vector runs along the rows of op(A), our N;
// B's along the columns of B, our M), then the epilogue.
cudaError_t set_fp8_attrs(cublasLtMatmulDesc_t desc, const LtPlanKey& key, const Fp8LinearArgs& args) {
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n, const char* what) {
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, v, n);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : fail_cublas(s, what);
  };
  const int8_t fast_accum = 0;
  if (auto e = set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof(fast_accum), "set fast accum")) return e;
  if (has_scales(key)) {
    const int32_t a_mode = key.a_scale_mode, b_mode = key.b_scale_mode;
    if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof(a_mode), "set A scale mode")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof(b_mode), "set B scale mode")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &args.w_scale, sizeof(void*), "set A scale")) return e;
    if (auto e = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &args.x_scale, sizeof(void*), "set B scale")) return e;
  }
  return lt_set_epilogue(desc, key, args.bias);
}

// Finds (or builds) the plan for `key`; caller holds g_mu. An invalid plan: no algorithm.
cudaError_t get_plan(const LtPlanKey& key, cublasLtHandle_t handle, const Fp8LinearArgs& args, LtPlan** out) {
  return g_plans.get(handle, key, false,
                     [&](cublasLtMatmulDesc_t desc) { return set_fp8_attrs(desc, key, args); }, out);
}

// The key of the "TN" layout: A = w8 stored [K,N] (ld ldw) transposed, B = x8 stored [K,M] (ld ldx).
LtPlanKey make_key(int dev, const Fp8LinearArgs& a, int64_t ldx, int64_t ldw, int64_t ldy) {
  const bool has_bias = a.bias != nullptr;
  LtPlanKey key;
  key.device = dev;
  key.a = {CUDA_R_8F_E4M3, a.K, a.N, ldw, align_of(a.w8)};
  key.b = {CUDA_R_8F_E4M3, a.K, a.M, ldx, align_of(a.x8)};
  key.d = {cuda_type(a.out_type), a.N, a.M, ldy, align_of(a.y)};
  key.align_c = a.residual ? align_of(a.residual) : 0;
  key.epilogue = lt_epilogue(has_bias, a.act == GemmAct::kGeluTanh);
  key.bias_type = cuda_type(has_bias ? a.bias_type : GemmType::kF32);
  key.align_bias = align_of(a.bias);
  key.a_scale_mode = key.b_scale_mode = kOuterVec;
  return key;
}

// d = x8·w8ᵀ (· scales when the plan has them, + bias and activation per the plan) (+ c, beta 1).
// *refused: cuBLASLt rejected the configuration at launch (nothing was queued).
cudaError_t run_plan(cublasLtHandle_t handle, void* ws, LtPlan& p, const LtPlanKey& key, const Fp8LinearArgs& a,
                     const void* c, void* d, cudaStream_t stream, bool* refused) {
  *refused = false;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v) {
    return cublasLtMatmulDescSetAttribute(p.desc, attr, v, sizeof(void*));
  };
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  if (lt_epilogue_has_bias(key.epilogue)) s = set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a.bias);
  if (s == CUBLAS_STATUS_SUCCESS && has_scales(key)) s = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a.w_scale);
  if (s == CUBLAS_STATUS_SUCCESS && has_scales(key)) s = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a.x_scale);
  if (s != CUBLAS_STATUS_SUCCESS) return fail_cublas(s, "set FP8 GEMM pointers");
  const float alpha = 1.0f, beta = c ? 1.0f : 0.0f;
  s = cublasLtMatmul(handle, p.desc, &alpha, a.w8, p.a, a.x8, p.b, &beta, c ? c : d, p.d, d, p.d, &p.algo, ws,
                     p.workspace, stream);
  if (s == CUBLAS_STATUS_SUCCESS) return cudaSuccess;
  // The scale pointers are checked only here (cublasLt.h): a refusal drops the plan, the caller falls back.
  *refused = s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_NOT_SUPPORTED;
  if (*refused) lt_plan_destroy(p);
  return fail_cublas(s, "cublasLtMatmul (FP8, " + lt_shape_str(key) + ")");
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
  const LtPlanCacheStats c = g_plans.stats();
  Fp8GemmStats s;
  s.plans = c.plans, s.hits = c.hits, s.misses = c.misses, s.unfused = g_unfused, s.unscaled = g_unscaled;
  return s;
}

void gemm_fp8_release_plans() {
  std::lock_guard<std::mutex> lk(g_mu);
  g_plans.clear();
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
    ++g_unfused;
    return launch_epilogue(nullptr, 0, nullptr, nullptr, a, ldy, stream);
  }
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return fail(e, "cudaGetDevice");
  cublasLtHandle_t handle = nullptr;
  void* ws = nullptr;
  if ((e = gemm_detail::lt_resources(dev, stream, &handle, &ws)) != cudaSuccess) return e;

  LtPlanKey key = make_key(dev, a, ldx, ldw, ldy);

  // Straight into y: the plain GEMM, or a fused epilogue cuBLASLt documents for e4m3 inputs (a bf16
  // bias only; GELU only for bf16 output, its tanh being approximate).
  const bool plain = key.epilogue == CUBLASLT_EPILOGUE_DEFAULT && !a.residual;
  const bool fusable = (!has_bias || a.bias_type == GemmType::kBF16) && (!gelu || a.out_type == GemmType::kBF16);
  LtPlan* plan = nullptr;
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
  ++g_unfused;
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
  key.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  key.d = {CUDA_R_32F, a.N, a.M, ldacc, align_of(acc)};
  key.bias_type = CUDA_R_32F;
  key.align_bias = 16;
  key.align_c = 0;
  Fp8LinearArgs plain_args = a;
  plain_args.bias = nullptr;
  e = cudaErrorNotSupported;
  for (bool outer : {true, false}) {  // outer-vector scales in the GEMM, else in the epilogue
    key.a_scale_mode = key.b_scale_mode = outer ? kOuterVec : kLtNoScaleMode;
    if ((e = get_plan(key, handle, plain_args, &plan)) != cudaSuccess) break;
    if (!plan->valid) {
      e = fail(cudaErrorNotSupported, "cuBLASLt has no FP8 algorithm for " + lt_shape_str(key) +
                                          " ldx=" + std::to_string(ldx) + " ldw=" + std::to_string(ldw));
      continue;
    }
    e = run_plan(handle, ws, *plan, key, plain_args, nullptr, acc, stream, &refused);
    if (e == cudaSuccess) {
      if (!outer) ++g_unscaled;
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
