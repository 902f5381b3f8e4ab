// Attention kernel selection on the device (attention_config.backend: auto | native | cudnn).
//   native: the project's own kernels (kernels/attention/attention.cuh): the Hopper kernel
//           (attention_fwd_wgmma_bf16: sm_90, bf16 in and out, D = 128) where it serves the call,
//           the flash kernel (any supported shape) otherwise.
//   cudnn:  cuDNN's fused SDPA (kernels/attention/attention_cudnn.cuh) where it serves the call
//           (bf16 q/k/v and out, D a multiple of 8 up to 128, ...), the flash kernel otherwise;
//           a build or device without cuDNN is a kUsage error naming attention_config.backend.
//   auto:   the Hopper kernel where it serves the call (the fastest measured), else cudnn when
//           available and the call is served, else the flash kernel.
// Whether the device runs the Hopper kernel at all is the path table's answer (ops/path_table.h).
// Both keep the contract of cuda_attention (ops/device_ops.h), which also checks the arguments.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "config/attention_config.h"
#include "core/tensor.h"

namespace vgen {

// "auto" | "native" | "cudnn" (tools and tests; the recipe parser reads attention_config.backend
// itself); anything else is kUsage naming attention_config.backend.
AttentionBackend parse_attention_backend(const std::string& name);

// Key chunking of cuDNN attention calls (device, bf16). cuDNN's SDPA runs ~7% slower per FLOP when
// the key count is not a multiple of 128 (H200, cuDNN 9.14/9.19: 569 vs 611 TFLOP/s at 75,600 vs
// 75,648 keys), so long key ranges are split into 128-multiple chunks plus the remainder, each
// attended with LSE and merged once in fp32 (attention_merge_parts_bf16). The caller's
// AttentionKeySplit (config/attention_config.h) says how:
//   kv_chunk < 0 (auto): split off the remainder only, when there are >= kKvSplitMinKeys keys;
//   0: never split (one call); N > 0: more than N keys are cut into 128-multiple chunks of ~N keys
//   plus the remainder. Every range's bf16 partial is alive until the merge: B·Sq·H·D·2 bytes each.
//   tail_fold: the remainder of a split (< 128 keys) is folded into the cuDNN ranges' result by one
//   pass of the own kernel (attention_tail_merge_bf16: the remainder's attention, started from their
//   LSE) instead of a cuDNN call plus an LSE merge.
constexpr int64_t kKvSplitMinKeys = 4096;

// The key ranges [begin, begin + len) one attention over `num_valid` keys runs as under `chunk`
// (AttentionKeySplit::kv_chunk, above); one range means no split. At most 16 ranges.
std::vector<std::pair<int64_t, int64_t>> attention_kv_plan(int64_t num_valid, int64_t chunk);

// Whether cuDNN attention can run here (built with cuDNN and it initialises on the current
// device); otherwise false with the reason in *why. Always false without the CUDA backend.
bool cudnn_attention_available(std::string* why = nullptr);

// cuda_attention through the backend named by `backend` (attention_config.backend), its cuDNN calls
// cut by `split`. Returns the kernel family that ran (kNative: the Hopper or the flash kernel; kCudnn).
AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, const std::string& backend,
                                     const AttentionKeySplit& split);
AttentionBackend cuda_attention_auto(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                                     int64_t num_valid_kv, float scale, AttentionBackend backend,
                                     const AttentionKeySplit& split);

}  // namespace vgen
