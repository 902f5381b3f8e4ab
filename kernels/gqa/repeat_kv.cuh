// CUDA launcher of the K/V head repeat (contract of repeat_kv_ref.h): kv and out of `type` (f32 or
// bf16), an exact copy. Raw device pointers; queued on `stream`; returns the launch status. Never
// includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

cudaError_t repeat_kv(const void* kv, void* out, FloatType type, int64_t rows, int64_t KVH, int64_t groups, int64_t D,
                      cudaStream_t stream);

}  // namespace vgen::kern
