// Device paths of the GQA ops (contracts in gqa_ops.h): CUDA builds run the kernels of kernels/gqa;
// CPU-only builds throw (gqa_device_ops.cpp).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

Tensor cuda_repeat_kv_heads(const Tensor& kv, int64_t groups);
Tensor cuda_gqa_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, bool causal,
                          int64_t causal_offset, float scale);

}  // namespace vgen
