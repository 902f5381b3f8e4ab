#include "kernels/gemm/lt_plan.cuh"

#include <algorithm>

#include "kernels/gemm/gemm_lt_common.cuh"

namespace vgen::kern::gemm_detail {

size_t LtPlanKeyHash::operator()(const LtPlanKey& k) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const LtOperand* o : {&k.a, &k.b, &k.d}) {
    for (int64_t v : {o->rows, o->cols, o->ld}) mix(uint64_t(v));
    mix(uint64_t(o->type) | uint64_t(o->align) << 32);
  }
  mix(uint64_t(uint32_t(k.device)) | uint64_t(k.align_c) << 32);
  mix(uint64_t(k.epilogue) | uint64_t(k.bias_type) << 32);
  mix(uint64_t(k.align_bias) | uint64_t(uint32_t(k.a_scale_mode)) << 32);
  mix(uint64_t(uint32_t(k.b_scale_mode)));
  return size_t(h);
}

void lt_plan_destroy(LtPlan& p) {
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.d) cublasLtMatrixLayoutDestroy(p.d);
  if (p.desc) cublasLtMatmulDescDestroy(p.desc);
  p = LtPlan{};
}

cublasLtEpilogue_t lt_epilogue(bool bias, bool gelu) {
  if (bias) return gelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  return gelu ? CUBLASLT_EPILOGUE_GELU : CUBLASLT_EPILOGUE_DEFAULT;
}

bool lt_epilogue_has_bias(cublasLtEpilogue_t epi) { return (uint32_t(epi) & uint32_t(CUBLASLT_EPILOGUE_BIAS)) != 0; }

cudaError_t lt_set_epilogue(cublasLtMatmulDesc_t desc, const LtPlanKey& key, const void* bias) {
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n, const char* what) {
    const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, v, n);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : fail_cublas(s, what);
  };
  const cublasLtEpilogue_t epi = key.epilogue;
  if (auto e = set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi), "set epilogue")) return e;
  if (!lt_epilogue_has_bias(epi)) return cudaSuccess;
  const int32_t bt = int32_t(key.bias_type);
  if (auto e = set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt), "set bias type")) return e;
  return set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias), "set bias pointer");
}

std::string lt_shape_str(const LtPlanKey& k) {
  return "M=" + std::to_string(k.b.cols) + " N=" + std::to_string(k.a.cols) + " K=" + std::to_string(k.a.rows);
}

namespace {

// The heuristic's preference: the workspace every stream has, split-K partial sums only in fp32 (the
// compute type) reduced in a fixed order (no in-place atomic or output-type reductions, which would
// round partial sums to bf16), and the operands' pointer alignments.
void query_algo(cublasLtHandle_t handle, const LtPlanKey& key, cublasLtMatmulPreference_t pref, LtPlan& p,
                cublasStatus_t* status) {
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  const uint32_t al_a = key.a.align, al_b = key.b.align, al_d = key.d.align;
  const uint32_t al_c = key.align_c ? std::min(key.align_c, key.d.align) : key.d.align;  // C is read through D's layout
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction, sizeof(reduction));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d));
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &res, &found);
  *status = s;
  if (s == CUBLAS_STATUS_SUCCESS && found > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
    p.valid = true;
    p.algo = res.algo;
    p.workspace = res.workspaceSize;
  }
}

}  // namespace

cudaError_t lt_plan_build(cublasLtHandle_t handle, const LtPlanKey& key, const LtDescSetter& set_attrs, LtPlan* out,
                          cublasStatus_t* heuristic_status) {
  LtPlan p;
  auto check = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS) {
      lt_plan_destroy(p);
      return fail_cublas(st, what);
    }
    return cudaSuccess;
  };
  if (auto e = check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate"))
    return e;
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const cublasOperation_t& v, const char* what) {
    return check(cublasLtMatmulDescSetAttribute(p.desc, attr, &v, sizeof(v)), what);
  };
  if (auto e = set(CUBLASLT_MATMUL_DESC_TRANSA, ta, "set transa")) return e;
  if (auto e = set(CUBLASLT_MATMUL_DESC_TRANSB, tb, "set transb")) return e;
  if (auto e = set_attrs(p.desc)) {
    lt_plan_destroy(p);
    return e;
  }
  auto layout = [&](cublasLtMatrixLayout_t* l, const LtOperand& o, const char* what) {
    return check(cublasLtMatrixLayoutCreate(l, o.type, uint64_t(o.rows), uint64_t(o.cols), o.ld), what);
  };
  if (auto e = layout(&p.a, key.a, "layout A")) return e;
  if (auto e = layout(&p.b, key.b, "layout B")) return e;
  if (auto e = layout(&p.d, key.d, "layout D")) return e;
  cublasLtMatmulPreference_t pref = nullptr;
  if (auto e = check(cublasLtMatmulPreferenceCreate(&pref), "preference")) return e;
  query_algo(handle, key, pref, p, heuristic_status);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!p.valid) lt_plan_destroy(p);
  *out = p;
  return cudaSuccess;
}

cudaError_t LtPlanCache::get(cublasLtHandle_t handle, const LtPlanKey& key, bool require_algo,
                             const LtDescSetter& set_attrs, LtPlan** out) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = plans_.find(key);
  if (it != plans_.end()) {
    ++hits_;
    *out = &it->second;
    return cudaSuccess;
  }
  ++misses_;
  LtPlan p;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  if (auto e = lt_plan_build(handle, key, set_attrs, &p, &s)) return e;
  if (!p.valid && require_algo)
    return fail_cublas(s == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_NOT_SUPPORTED : s,
                       "cublasLtMatmulAlgoGetHeuristic (" + lt_shape_str(key) + ")");
  *out = &plans_.emplace(key, p).first->second;
  return cudaSuccess;
}

void LtPlanCache::clear() {
  std::lock_guard<std::mutex> lk(mu_);
  for (auto& [k, p] : plans_) lt_plan_destroy(p);
  plans_.clear();
}

LtPlanCacheStats LtPlanCache::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return {plans_.size(), hits_, misses_};
}

}  // namespace vgen::kern::gemm_detail
