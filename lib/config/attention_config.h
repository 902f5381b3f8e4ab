// attention_config of the recipe: plain data, read by io/recipe.cpp and used by the attention
// factory (parallel/) below io, so it lives in the lowest room.
#pragma once
#include <cstdint>

#include "config/named.h"

namespace vgen {

// The device kernels of attention (ops/attention_backend.h says what each one runs).
enum class AttentionBackend : uint8_t { kAuto, kNative, kCudnn };
inline constexpr Named<AttentionBackend> kAttentionBackendNames[] = {
    {AttentionBackend::kAuto, "auto"}, {AttentionBackend::kNative, "native"}, {AttentionBackend::kCudnn, "cudnn"}};
inline const char* attention_backend_name(AttentionBackend b) { return name_in(kAttentionBackendNames, b); }

// How a cuDNN attention over many keys is cut into calls (ops/attention_backend.h attention_kv_plan):
// speed only, the result is the same attention. Tuning knobs of the environment, not recipe keys
// (VGEN_ATTN_KV_CHUNK, VGEN_ATTN_TAIL; io/attention_tuning.h reads them when a recipe is parsed).
struct AttentionKeySplit {
  // < 0 (auto): split off the remainder of a 128-multiple only; 0: never split; N > 0: cut into
  // 128-multiple chunks of about N keys plus the remainder.
  int64_t kv_chunk = -1;
  // The remainder (< 128 keys) folded into the cuDNN ranges' result by the own kernel in one pass;
  // false: one more cuDNN call and an LSE merge.
  bool tail_fold = true;
};

struct AttentionConfig {
  AttentionBackend backend = AttentionBackend::kAuto;
  AttentionKeySplit key_split;
};

}  // namespace vgen
