// CUDA launcher of the row gather with the contract of gather_rows_ref.h: out[r] = table[index[r]]
// for r < rows, f32 rows of `cols`; table, index (i64, every value in range) and out on the device.
// Queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

cudaError_t gather_rows(const float* table, const int64_t* index, float* out, int64_t rows, int64_t cols,
                        cudaStream_t stream);

}  // namespace vgen::kern
