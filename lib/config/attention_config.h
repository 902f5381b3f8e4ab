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

struct AttentionConfig {
  AttentionBackend backend = AttentionBackend::kAuto;
};

}  // namespace vgen
