// CPU reference of the K/V head repeat of grouped-query attention, fp32. The CUDA launcher in
// repeat_kv.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// kv [rows, KVH, D] → out [rows, KVH·groups, D] with out head h = kv head h / groups.
void repeat_kv_ref(const float* kv, float* out, int64_t rows, int64_t KVH, int64_t groups, int64_t D);

}  // namespace vgen::kern
