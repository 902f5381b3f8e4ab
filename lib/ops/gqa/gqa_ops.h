// Tensor-level grouped-query attention ops (kernels/gqa), dispatched by device: host f32 tensors run
// the CPU references, device tensors (f32 or bf16) the CUDA launchers (gqa_device_ops.h).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// kv [B, S, KVH, D] → [B, S, KVH·groups, D], head h a copy of KV head h / groups (exact).
Tensor repeat_kv_heads(const Tensor& kv, int64_t groups);

// q [B, Sq, H, D], k/v [B, Skv, KVH, D] (H a multiple of KVH; head h reads KV head h / (H / KVH)) →
// [B, Sq, H, D] in q's dtype, scale 1/√D. Query i sees key j when j < num_valid_kv and, if `causal`,
// j <= i + causal_offset; a row that sees no key is 0. The device kernel walks every visible key of
// a query tile: meant for short key ranges (a prompt's causal self-attention).
Tensor gqa_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, bool causal,
                     int64_t causal_offset = 0);

}  // namespace vgen
