// CUDA launcher of attention with grouped K/V heads and an optional causal mask (contract of
// gqa_attention_ref.h): q, k, v, out of `type` (f32 or bf16), scores and softmax in fp32, out rounded
// once. Written for short key ranges (a prompt's causal self-attention): one block per (query tile,
// head, sample) walks every visible key. Raw device pointers; queued on `stream`; returns the launch
// status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

constexpr int64_t kGqaAttnMaxHeadDim = 128;

// Shapes as gqa_attention_ref; 1 ≤ D ≤ kGqaAttnMaxHeadDim, H ≤ 65535, B ≤ 65535; out must not
// alias q, k or v.
cudaError_t gqa_attention(const void* q, const void* k, const void* v, void* out, FloatType type, int64_t B,
                          int64_t Sq, int64_t Skv, int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv, bool causal,
                          int64_t causal_offset, float scale, cudaStream_t stream);

}  // namespace vgen::kern
