// cuBLASLt matmul plans shared by the launchers of kernels/gemm/ (gemm.cu: bf16/fp32, gemm_fp8.cu:
// e4m3). A plan is a matmul descriptor, the A/B/D layouts, the algorithm the heuristic chose and
// its workspace size, cached per LtPlanKey. The builder makes what every format shares (fp32
// compute, the "TN" transposes, the layouts, the heuristic preference); the caller's setter writes
// the format's own descriptor attributes (fast accumulation, scale modes and pointers, epilogue,
// bias). A block-scaled format (MXFP8 with VEC32_UE8M0 scales, NVFP4 with VEC16_UE4M3) is one more
// caller: its operand types in the key's layouts, its scale modes in a_scale_mode/b_scale_mode and
// a setter that writes them. Internal to kernels/gemm/; never includes lib/.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace vgen::kern::gemm_detail {

constexpr int32_t kLtNoScaleMode = -1;  // no scale-mode attributes in the descriptor

// One column-major operand: rows × cols of `type` with leading dimension ld, and the alignment of
// its pointer (bytes, a power of two up to 16) that the heuristic may assume.
struct LtOperand {
  cudaDataType_t type = CUDA_R_32F;
  int64_t rows = 0, cols = 0, ld = 0;
  uint32_t align = 16;
  bool operator==(const LtOperand&) const = default;
};

// Everything a plan depends on; the caller fills every field. cuBLASLt computes D[N,M] = op(A)·B
// with A = the weights [K,N] transposed and B = the activations [K,M] (our row-major y = x·wᵀ).
struct LtPlanKey {
  int device = 0;
  LtOperand a, b, d;
  uint32_t align_c = 0;  // alignment of C (a residual, read through D's layout); 0: no C
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cudaDataType_t bias_type = CUDA_R_32F;  // with a bias epilogue
  uint32_t align_bias = 16;
  int32_t a_scale_mode = kLtNoScaleMode, b_scale_mode = kLtNoScaleMode;  // CUBLASLT_MATMUL_MATRIX_SCALE_*
  bool operator==(const LtPlanKey&) const = default;
};
struct LtPlanKeyHash {
  size_t operator()(const LtPlanKey& k) const;
};

struct LtPlan {
  bool valid = false;  // false: cuBLASLt has no algorithm for the key, or refused it (remembered)
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

// Writes the format's attributes into a fresh descriptor; returns fail_cublas(...) on an error.
using LtDescSetter = std::function<cudaError_t(cublasLtMatmulDesc_t desc)>;

// Destroys the plan's descriptor and layouts and leaves it invalid.
void lt_plan_destroy(LtPlan& p);

// Builds the plan for `key`. A cuBLASLt error returns it (nothing is kept); no algorithm gives an
// invalid plan and the heuristic's status in *heuristic_status.
cudaError_t lt_plan_build(cublasLtHandle_t handle, const LtPlanKey& key, const LtDescSetter& set_attrs, LtPlan* out,
                          cublasStatus_t* heuristic_status);

// The epilogue for a bias and/or GELU.
cublasLtEpilogue_t lt_epilogue(bool bias, bool gelu);
bool lt_epilogue_has_bias(cublasLtEpilogue_t epi);

// Sets key.epilogue, and for a bias epilogue key.bias_type and the bias pointer (the heuristic reads
// its alignment; a launch sets the pointer again).
cudaError_t lt_set_epilogue(cublasLtMatmulDesc_t desc, const LtPlanKey& key, const void* bias);

std::string lt_shape_str(const LtPlanKey& key);  // "M=… N=… K=…" of our y = x·wᵀ

struct LtPlanCacheStats {
  uint64_t plans = 0, hits = 0, misses = 0;
};

// Plans by key. The map is thread-safe; a plan's descriptor is rewritten at launch (pointer
// attributes), so the caller serialises the use of a plan it got. Plans live until clear().
class LtPlanCache {
 public:
  // The plan for `key`, built with set_attrs on a miss. A key with no algorithm is remembered as an
  // invalid plan, unless require_algo: then nothing is cached and the heuristic's failure returned.
  cudaError_t get(cublasLtHandle_t handle, const LtPlanKey& key, bool require_algo, const LtDescSetter& set_attrs,
                  LtPlan** out);
  void clear();  // destroys every plan (hits and misses are kept)
  LtPlanCacheStats stats() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<LtPlanKey, LtPlan, LtPlanKeyHash> plans_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace vgen::kern::gemm_detail
