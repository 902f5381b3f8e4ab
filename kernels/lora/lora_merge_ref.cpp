#include "kernels/lora/lora_merge_ref.h"

namespace vgen::kern {

void lora_add_scaled_ref(float* dst, const float* src, float factor, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    volatile float p = factor * src[i];  // rounded on its own, never fused into the add
    dst[i] = dst[i] + p;
  }
}

}  // namespace vgen::kern
