// CUDA launcher of the T5 self-attention core with the contract of bias_attention_ref.h:
// scores = q·kᵀ (NO 1/√d scaling) + relative bias, softmax in fp32 over the valid keys only (keys
// j ≥ num_valid_kv get exactly zero weight, as adding finfo.min does), out = p·v.
// f32: fp32 throughout. bf16: the rounding points of transformers' eager bf16 attention
// (wan_spec.md §2.3): s = bf16(bf16(q·k) + bf16(bias)), p = bf16(softmax_fp32(s)),
// out = bf16(Σ p·v) with fp32 accumulation. Raw device pointers; queued on `stream`; returns the
// launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

constexpr int64_t kT5AttnMaxHeadDim = 128;

// q [Lq, H·D], k/v [Lk, H·D] (token-major, head h at columns h·D..h·D+D−1), out [Lq, H·D], all of
// `type` (f32 or bf16); out must not alias q, k or v. rel_bias f32 [H, Lq + Lk − 1] holds the bias
// of offset rel = j − i at index rel + Lq − 1 (may be null: no bias). With no valid key a row is 0.
// Any Lq, Lk; 1 ≤ D ≤ kT5AttnMaxHeadDim; H ≤ 65535.
cudaError_t t5_attention(const void* q, const void* k, const void* v, const float* rel_bias, void* out,
                         FloatType type, int64_t Lq, int64_t Lk, int64_t H, int64_t D, int64_t num_valid_kv,
                         cudaStream_t stream);

}  // namespace vgen::kern
