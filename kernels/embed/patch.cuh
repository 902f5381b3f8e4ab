// CUDA launchers of the DiT patch gather and unpatchify with the contracts of patch_ref.h, for
// f32 or bf16 data (a conversion between the two is one rounding, as a cast before the copy).
// Raw device pointers; queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// x [B, C, T, H, W] of x_type → out [B, tok_count, C·pt·ph·pw] of out_type for global tokens
// [tok_begin, tok_begin + tok_count); rows of tokens >= S are zero.
cudaError_t patchify(const void* x, FloatType x_type, void* out, FloatType out_type, int64_t B, int64_t C, int64_t T,
                     int64_t H, int64_t W, int64_t pt, int64_t ph, int64_t pw, int64_t tok_begin, int64_t tok_count,
                     cudaStream_t stream);

// tokens [B, S, pt·ph·pw·C] of t_type (c fastest) → out [B, C, T, H, W] of out_type.
cudaError_t unpatchify(const void* tokens, FloatType t_type, void* out, FloatType out_type, int64_t B, int64_t C,
                       int64_t T, int64_t H, int64_t W, int64_t pt, int64_t ph, int64_t pw, cudaStream_t stream);

}  // namespace vgen::kern
