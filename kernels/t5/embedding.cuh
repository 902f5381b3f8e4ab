// CUDA launcher of the token embedding lookup (the device half of Umt5Encoder::forward's
// embedding copy; T5 does not scale embeddings). Raw device pointers; queued on `stream`; returns
// the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// out[r, :] = table[ids[r], :] for r < rows; table [vocab, dim] and out [rows, dim] of `type`
// (f32 or bf16, copied bit for bit), ids i64 [rows] on the device. The caller checks the ids; a row
// whose id lies outside [0, vocab) is written as NaN (never read out of bounds).
cudaError_t embedding_gather(const void* table, const int64_t* ids, void* out, FloatType type, int64_t rows,
                             int64_t dim, int64_t vocab, cudaStream_t stream);

}  // namespace vgen::kern
