// T5 self-attention core, CPU fp32 reference: scores = q·kᵀ (NO 1/√d scaling) + relative bias,
// softmax over the valid keys only (masked keys get exactly zero weight, as adding finfo.min does),
// out = p·v.
#pragma once
#include <cstdint>

namespace vgen::kern {

// q [Lq, H·D], k/v [Lk, H·D] (token-major, head h at columns h·D..h·D+D−1), out [Lq, H·D].
// Keys j ≥ num_valid_kv are masked. rel_bias [H, Lq + Lk − 1] holds the bias of offset
// rel = j − i at index rel + Lq − 1 (may be null: no bias). With no valid key the row is 0.
void t5_attention_ref(const float* q, const float* k, const float* v, const float* rel_bias, float* out, int64_t Lq,
                      int64_t Lk, int64_t H, int64_t D, int64_t num_valid_kv);

}  // namespace vgen::kern
