// CPU reference attention with log-sum-exp output and an exact valid-key count.
// The CUDA launchers in attention.cuh have the same contract.
#pragma once
#include <cstdint>

namespace vgen::kern {

// q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D] (row-major, fp32).
// lse [B,H,Sq] fp32 natural-log log-sum-exp of the scaled scores (may be null).
// Keys j >= num_valid_kv get zero weight; with no valid key the output row is 0 and lse = -inf.
void attention_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B, int64_t Sq,
                   int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale);

// As attention_ref with grouped K/V heads: k/v [B,Skv,KVH,D], KVH dividing H; query head h reads K/V
// head h / (H / KVH) (torch's enable_gqa). KVH == H is attention_ref.
void attention_grouped_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                           int64_t Sq, int64_t Skv, int64_t H, int64_t KVH, int64_t D, int64_t num_valid_kv,
                           float scale);

// Merges a partial result (o2, lse2) into (o1, lse1) in place, fp32, numerically stable:
// lse = log(e^lse1 + e^lse2), o1 = (e^lse1·o1 + e^lse2·o2) / e^lse. o: [B,S,H,D], lse: [B,H,S].
void attention_merge_ref(float* o1, float* lse1, const float* o2, const float* lse2, int64_t B, int64_t S, int64_t H,
                         int64_t D);

// N-way merge of partial results over disjoint key ranges (the key-chunked attention):
// out = Σ_i w_i·parts[i], w_i = e^(lse_i − lse), lse = log Σ_i e^lse_i (lse_out may be null), fp32.
// A row with every lse_i = −inf is 0 with lse −inf. parts[i], out: [B,S,H,D]; lses[i], lse_out: [B,H,S].
void attention_merge_parts_ref(const float* const* parts, const float* const* lses, int n, float* out, float* lse_out,
                               int64_t B, int64_t S, int64_t H, int64_t D);

// attention_tail_merge_bf16 in fp32: out/lse hold the attention over other keys ([B,Sq,H,D],
// [B,H,Sq]; lse −inf: none) and become the attention over those and k/v's first num_valid_kv keys:
// attention_ref over the range merged in by attention_merge_ref.
void attention_tail_merge_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                              int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale);

}  // namespace vgen::kern
