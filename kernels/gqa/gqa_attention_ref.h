// CPU reference of attention with grouped K/V heads (GQA) and an optional causal mask, fp32. The CUDA
// launcher in gqa_attention.cuh has the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// q [B, Sq, H, D], k/v [B, Skv, KVH, D], out [B, Sq, H, D] (row-major); H a multiple of KVH, query
// head h reads KV head h / (H / KVH) (torch's enable_gqa). Scores are q·k·scale; query i sees key j
// when j < num_valid_kv and, if `causal`, j <= i + causal_offset. A row that sees no key is 0.
void gqa_attention_ref(const float* q, const float* k, const float* v, float* out, int64_t B, int64_t Sq, int64_t Skv,
                       int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv, bool causal, int64_t causal_offset,
                       float scale);

}  // namespace vgen::kern
