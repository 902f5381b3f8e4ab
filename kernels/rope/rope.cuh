// CUDA launchers of the rotary embedding with interleaved pairs (contract of rope_ref.h) and of
// the fused QK RMSNorm + RoPE of the DiT's self-attention (wan_spec.md §1.4.5). Tables are fp32
// [seq, head_dim] (cos read at 2j, sin at 2j+1); activations f32 or bf16, rotation in fp32,
// one rounding into the output type. y may alias x. Raw device pointers; queued on `stream`;
// returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// x, y [batch, seq, heads, head_dim] (head_dim even), both of `type`.
cudaError_t rope(const void* x, const float* cos, const float* sin, void* y, FloatType type, int64_t batch,
                 int64_t seq, int64_t heads, int64_t head_dim, cudaStream_t stream);

// RMSNorm over each full row of heads·head_dim elements with weight [heads·head_dim] (w_type f32
// or bf16; null = no weight), then the rotation of rope() on each head, in one pass over x.
// Rounding of a bf16 `type` as the two unfused ops: n = bf16(bf16(x·rs)·w), y = bf16(rot(n)).
// With cos = sin = null it is the plain RMSNorm (then head_dim may be odd).
// Shared memory holds one row: heads·head_dim up to ~56k elements.
cudaError_t rms_norm_rope(const void* x, const void* weight, FloatType w_type, const float* cos, const float* sin,
                          void* y, FloatType type, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
                          float eps, cudaStream_t stream);

}  // namespace vgen::kern
