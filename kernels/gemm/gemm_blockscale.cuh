// Block-scaled GEMM through cuBLASLt (Blackwell: compute capability 10.x and 12.x) for the DiT's
// linear layers in MXFP8 or NVFP4, with the operands of kernels/blockscale/blockscale_quant.cuh:
//   y[m,n] = (Σ_k x̃[m,k]·w̃[n,k]) · alpha · row_scale[m] + bias[n]
// where x̃, w̃ are the values the formats store (elements times their block's scale). cuBLASLt
// reads the block scales itself (A/B_SCALE_MODE = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 for
// MXFP8, VEC16_UE4M3 for NVFP4, the scales in the 128×4 tiled layout of blockscale_format.h),
// accumulates in fp32 and writes fp32 to a stream-ordered temporary; one epilogue kernel applies
// alpha (NVFP4: 1/S of the weight), the per-row factor (NVFP4: 1/S of each token, or null) and the
// bias, and rounds once to the bf16 or fp32 output. w is cuBLAS' A (transposed, "TN"), x its B.
// Requirements: Kp a multiple of 32, x/w 16-byte aligned with dense rows (Kp elements). On another
// compute capability it returns cudaErrorNotSupported without launching (the path table keeps it
// off such GPUs). Unmeasured: it has not run on a GPU (docs/support.md). Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm/gemm.cuh"

namespace vgen::kern {

enum class BlockFormat : uint8_t { kMxfp8, kNvfp4 };

struct BlockScaledLinearArgs {
  BlockFormat format = BlockFormat::kMxfp8;
  const uint8_t* x = nullptr;     // [M, Kp] e4m3 (MXFP8) or [M, Kp/2] packed E2M1 (NVFP4)
  const uint8_t* x_sf = nullptr;  // x's scales, swizzled: bs_scales_bytes(M, Kp / block)
  const uint8_t* w = nullptr;     // [N, Kp] or [N, Kp/2], as x
  const uint8_t* w_sf = nullptr;  // bs_scales_bytes(N, Kp / block)
  float alpha = 1.0f;
  const float* row_scale = nullptr;  // [M] or null
  const float* bias = nullptr;       // [N] f32 or null
  void* y = nullptr;                 // [M, N] dense of out_type
  GemmType out_type = GemmType::kBF16;
  int64_t M = 0, N = 0, Kp = 0;
};

// Queues the GEMM on `stream` (current device).
cudaError_t linear_blockscale(const BlockScaledLinearArgs& args, cudaStream_t stream);

// Frees the cached block-scaled plans.
void gemm_blockscale_release_plans();

// Whether the current device has the block-scaled tensor cores this launcher drives.
bool blockscale_gemm_supported();

}  // namespace vgen::kern
