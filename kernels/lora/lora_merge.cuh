// CUDA launcher of the LoRA merge's elementwise step with the contract of lora_merge_ref.h:
// dst = round(float(dst) + round_f32(factor·src)) for an f32 or bf16 dst (one rounding into its
// type), src fp32 (the fp32 product B·A of a device GEMM, or a sum of such). Raw device pointers;
// queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// dst[i] = dst[i] + factor·src[i] for i < n; dst of dst_type (kF32 or kBF16), src fp32.
cudaError_t lora_add_scaled(void* dst, FloatType dst_type, const float* src, float factor, int64_t n,
                            cudaStream_t stream);

}  // namespace vgen::kern
