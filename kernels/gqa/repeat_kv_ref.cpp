#include "kernels/gqa/repeat_kv_ref.h"

#include <cstring>

namespace vgen::kern {

void repeat_kv_ref(const float* kv, float* out, int64_t rows, int64_t KVH, int64_t groups, int64_t D) {
  const int64_t H = KVH * groups;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < H; ++h)
      std::memcpy(out + (r * H + h) * D, kv + (r * KVH + h / groups) * D, size_t(D) * sizeof(float));
}

}  // namespace vgen::kern
