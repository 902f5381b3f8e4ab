// CUDA GEMM through cuBLASLt with the contract of gemm_ref.h linear_ref:
//   y[M,N] = act(alpha · x[M,K] · w[N,K]ᵀ + bias[N]) (+ residual[M,N])
// (row-major, PyTorch Linear layout)
// bf16 inputs accumulate in fp32 and write bf16 or fp32 (one rounding of the fp32 result, bias and
// activation applied before it); fp32 inputs compute in plain fp32 (no TF32) for precision fp32.
// Bias runs in the cuBLASLt epilogue where the heuristic offers an algorithm for it (a bf16 bias with
// bf16 output, as PyTorch's addmm: the product may be rounded to bf16 before the bias is added, one
// extra half-ulp of |x·wᵀ|; an fp32 bias with bf16 output has no cuBLASLt kernel). GELU-tanh runs in
// that epilogue too for bf16 inputs and output (cuBLASLt's tanh approximation: within 5e-4·|v|, plus
// the same product rounding); otherwise the plain GEMM writes fp32 and a separate kernel applies
// bias/activation/rounding (same result up to fp32 rounding). Split-K algorithms are allowed only with an fp32 reduction
// (never bf16 partial sums, never atomics). Plans (descriptors, layouts, chosen algorithm) are cached per
// (device, M, N, K, leading dims, types, epilogue, pointer alignments); each (device, stream) has its
// own workspace. A residual is added in the epilogue (cuBLASLt's C with beta 1; in place when it is
// y): the residual update of a transformer block without a pass of its own. Thread-safe. Never
// includes lib/; returns a cudaError_t, with cuBLAS details in gemm_last_error().
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

enum class GemmType : uint8_t { kF32, kBF16 };
enum class GemmAct : uint8_t { kNone, kGeluTanh };  // GELU tanh = 0.5x(1+tanh(√(2/π)(x+0.044715x³)))

struct LinearArgs {
  const void* x = nullptr;  // [M, K], row stride ldx
  const void* w = nullptr;  // [N, K], row stride ldw
  GemmType in_type = GemmType::kBF16;  // type of x and w
  const void* bias = nullptr;  // [N] or null
  GemmType bias_type = GemmType::kBF16;
  void* y = nullptr;  // [M, N], row stride ldy; must not alias x or w
  // [M, N] of out_type with row stride ldy, added to the result; may be y itself (in place), must not
  // alias x or w. Not with an activation. cuBLASLt's bf16 epilogue may round a partial sum (of the
  // product, bias and residual) to bf16 before adding the last term; the separate epilogue rounds once.
  const void* residual = nullptr;
  GemmType out_type = GemmType::kBF16;
  int64_t M = 0, N = 0, K = 0;
  GemmAct act = GemmAct::kNone;
  int64_t ldx = 0, ldw = 0, ldy = 0;  // 0 = dense (K, K, N)
  float alpha = 1.0f;  // scales x·wᵀ only (not bias or residual), inside the fp32 epilogue
};

// Queues the GEMM on `stream` (uses the current device). fp32 inputs require fp32 output and bias.
cudaError_t linear(const LinearArgs& args, cudaStream_t stream);

// Human-readable detail of the last failure on this thread ("" after a success).
const char* gemm_last_error();

// Tests and benchmarks: false skips the fused epilogue (exercises the fallback path).
void gemm_set_fused_epilogue(bool enabled);

struct GemmCacheStats {
  uint64_t plans = 0;      // cached plans
  uint64_t hits = 0;       // linear() calls that reused a plan
  uint64_t misses = 0;     // linear() calls that built one
  uint64_t unfused = 0;    // linear() calls that ran bias/activation in the separate kernel
};
GemmCacheStats gemm_cache_stats();

// Frees cuBLASLt handles, workspaces and plans (synchronises the devices). Optional at exit.
void gemm_release_resources();

}  // namespace vgen::kern
