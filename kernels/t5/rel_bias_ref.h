// T5 relative position bias, CPU reference: the bucket function of transformers'
// `_relative_position_bucket` (log computed in float32, truncated to an integer) and a compact
// per-offset bias table for the attention kernel.
#pragma once
#include <cstdint>

namespace vgen::kern {

// Bucket of relative position rel = key_pos − query_pos. Bidirectional (encoder): half the buckets
// for rel > 0; within a half, exact buckets below num_buckets/4 (resp. /2 when unidirectional),
// logarithmic up to max_distance, clamped to the last bucket.
int t5_relative_bucket(int64_t rel, bool bidirectional, int num_buckets, int max_distance);

// bias[h, t] = table[bucket(rel_min + t), h] for t in [0, num_rel); table [num_buckets, H]
// (the relative_attention_bias.weight layout), bias [H, num_rel].
void t5_rel_bias_ref(const float* table, float* bias, int64_t num_heads, int64_t rel_min, int64_t num_rel,
                     bool bidirectional, int num_buckets, int max_distance);

}  // namespace vgen::kern
