// What one transformer block of one forward computes in (the model resolves it per block and step
// from its fp8 options, the denoising step and its attention config, and passes it down): the
// block's fp8 switches, how its host fp32 linears run, and the attention calls' policy (device
// backend and key split). The cross-attention never runs in fp8.
#pragma once
#include "ops/fp8.h"
#include "ops/linear.h"
#include "parallel/seq_attention.h"

namespace vgen {

struct WanBlockPolicy {
  Fp8Switches fp8;
  LinearRows rows = LinearRows::kBatched;
  AttentionConfig attention;
  AttentionPolicy self_attention() const {
    return {attention.backend, attention.key_split, fp8.attention, fp8.qk_int8 ? QkFormat::kInt8 : QkFormat::kE4m3};
  }
  AttentionPolicy cross_attention() const {
    return {attention.backend, attention.key_split, false, QkFormat::kE4m3};
  }
};

}  // namespace vgen
