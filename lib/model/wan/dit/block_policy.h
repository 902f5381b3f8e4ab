// What one transformer block of one forward computes in (the model resolves it per block and step
// from its fp8 options, the denoising step and its attention backend, and passes it down): the
// block's fp8 switches, how its host fp32 linears run, and the attention calls' policy. The
// cross-attention never runs in fp8.
#pragma once
#include "ops/fp8.h"
#include "ops/linear.h"
#include "parallel/seq_attention.h"

namespace vgen {

struct WanBlockPolicy {
  Fp8Switches fp8;
  LinearRows rows = LinearRows::kBatched;
  AttentionBackend backend = AttentionBackend::kAuto;
  AttentionPolicy self_attention() const {
    return {backend, fp8.attention, fp8.qk_int8 ? QkFormat::kInt8 : QkFormat::kE4m3};
  }
  AttentionPolicy cross_attention() const { return {backend, false, QkFormat::kE4m3}; }
};

}  // namespace vgen
