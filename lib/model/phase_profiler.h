// GPU time per phase of a DiT's forwards (VGEN_PROFILE_STEPS=1, pipeline/denoise.cpp): a device
// model brackets each op with CUDA events of its phase while a profiler is attached, so a profiled
// forward is slightly slower than an unprofiled one.
#pragma once
#include <cstdint>

#include "core/cuda_stream.h"

namespace vgen {

class DitPhaseProfiler {
 public:
  enum Phase { kGemm = 0, kSelfAttention, kCrossAttention, kOther, kCount };
  static const char* name(Phase p);
  void start(Phase p);
  void stop();
  double seconds(Phase p);  // accumulated GPU seconds (waits for the GPU)
  int64_t calls(Phase p) const { return calls_[p]; }

 private:
  CudaEventTimer timers_[kCount];
  int64_t calls_[kCount] = {};
  Phase current_ = kOther;
  bool running_ = false;
};

}  // namespace vgen
