// CPU reference of the LoRA merge's elementwise step (fp32): dst = dst + factor·src with the
// product and the sum each rounded to fp32 (no fused multiply-add), so the host merge and the
// CUDA launcher in lora_merge.cuh give the same bits for the same inputs.
#pragma once
#include <cstdint>

namespace vgen::kern {

// dst[i] = dst[i] + factor·src[i] for i < n.
void lora_add_scaled_ref(float* dst, const float* src, float factor, int64_t n);

}  // namespace vgen::kern
