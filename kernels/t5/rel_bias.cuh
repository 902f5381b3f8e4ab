// CUDA launcher of the T5 relative position bias table gather (the device half of
// t5_rel_bias_ref in rel_bias_ref.h). The bucket of each offset is computed on the host with
// t5_relative_bucket: its float32 log must truncate exactly as transformers' does, so it is not
// re-evaluated with the device's logf. Raw device pointers; queued on `stream`; returns the launch
// status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// bias[h, t] = table[bucket[t], h] for h < num_heads, t < num_rel. table [num_buckets, num_heads]
// of table_type (f32 or bf16; the relative_attention_bias.weight layout), bucket i64 [num_rel],
// bias f32 [num_heads, num_rel]. A bucket outside [0, num_buckets) yields NaN (never read out of
// bounds).
cudaError_t t5_rel_bias_gather(const void* table, FloatType table_type, const int64_t* bucket, float* bias,
                               int64_t num_heads, int64_t num_rel, int64_t num_buckets, cudaStream_t stream);

}  // namespace vgen::kern
