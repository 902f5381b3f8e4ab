// FP8 e4m3 GEMM through cuBLASLt for the DiT's linear layers, with the contract of
// gemm_fp8_ref.h (row-major, PyTorch Linear layout, per-row scales from quantize_rows_fp8):
//   y[m,n] = act((Σ_k x8[m,k]·w8[n,k]) · x_scale[m] · w_scale[n] + bias[n]) (+ residual[m,n])
// fp32 accumulation (cuBLASLt's fast accumulation off: the tensor cores' partial sums are promoted
// to fp32 periodically), one rounding to the bf16 or fp32 output.
// The scales are cuBLASLt's outer-vector scaling (A/B_SCALE_MODE = OUTER_VEC_32F, Hopper): w8 is
// cuBLAS' A (transposed, "TN"), x8 its B. Where it runs:
//   fused in cuBLASLt: the plain product; a bf16 bias (BIAS epilogue; the only bias type cuBLASLt
//     has for e4m3 inputs, with bf16 and fp32 output); GELU-tanh with or without a bf16 bias
//     (GELU / GELU_BIAS, bf16 output only, as gemm.cuh: cuBLASLt's tanh is an approximation within
//     5e-4·|v|); a residual through C with beta 1 (in place when it is y).
//   separate epilogue kernel (the GEMM writes fp32 to a stream-ordered temporary, or to y itself
//     when y is fp32 and holds no residual): an fp32 bias (the gate-folded bias'[n] = bias[n]·g[n]
//     of fp8_scale_vector), GELU with fp32 output, any epilogue the heuristic offers no algorithm
//     for or that cuBLASLt refuses at launch, y / residual / ldy not 16-byte aligned, and
//     gemm_set_fused_epilogue(false). Same value up to fp32 rounding; one bf16 rounding.
//   If the device's cuBLASLt has no outer-vector kernel for a shape, the GEMM runs unscaled and the
//     separate epilogue applies x_scale·w_scale.
// A fused bf16 epilogue may round the scaled product to bf16 before adding the bias or residual
// (as gemm.cuh's): one more half-ulp of |product|.
// Requirements (cuBLASLt's for FP8): K, ldx and ldw multiples of 16, x8 and w8 16-byte aligned
// (else cudaErrorInvalidValue); N·sizeof(out) a multiple of 16 is what cuBLASLt documents — other
// N are passed to it and may give cudaErrorNotSupported. Plans (descriptors, layouts, algorithm) are
// cached per (device, shape, leading dims, types, epilogue, alignments); the cuBLASLt handle and
// per-stream workspace are gemm.cu's. Thread-safe; never includes lib/; errors in gemm_last_error().
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm/gemm.cuh"

namespace vgen::kern {

struct Fp8LinearArgs {
  const uint8_t* x8 = nullptr;  // [M, K] e4m3, row stride ldx
  const float* x_scale = nullptr;  // [M]
  const uint8_t* w8 = nullptr;  // [N, K] e4m3, row stride ldw
  const float* w_scale = nullptr;  // [N]
  const void* bias = nullptr;  // [N] or null
  GemmType bias_type = GemmType::kBF16;
  void* y = nullptr;  // [M, N], row stride ldy; must not alias the inputs
  // [M, N] of out_type, row stride ldy, added to the result; may be y (in place). Not with act.
  const void* residual = nullptr;
  GemmType out_type = GemmType::kBF16;
  int64_t M = 0, N = 0, K = 0;
  GemmAct act = GemmAct::kNone;
  int64_t ldx = 0, ldw = 0, ldy = 0;  // 0 = dense (K, K, N)
};

// Queues the GEMM on `stream` (current device; needs sm_89+ with FP8 tensor cores).
cudaError_t linear_fp8(const Fp8LinearArgs& args, cudaStream_t stream);

// linear_fp8 calls since start: plans = cached plans, unfused = calls that ran the separate epilogue,
// unscaled = calls whose GEMM ran without outer-vector scales.
struct Fp8GemmStats {
  uint64_t plans = 0, hits = 0, misses = 0, unfused = 0, unscaled = 0;
};
Fp8GemmStats gemm_fp8_stats();

// Frees the cached FP8 plans (gemm_release_resources frees the shared handle and workspaces).
void gemm_fp8_release_plans();

}  // namespace vgen::kern
