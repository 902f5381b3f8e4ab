// GPU time per phase of a DiT's forwards (VGEN_PROFILE_STEPS=1, pipeline/denoise.cpp): a device
// model brackets each op with CUDA events of its phase while a profiler is attached, so a profiled
// forward is slightly slower than an unprofiled one.
#pragma once
#include <cstdint>
#include <type_traits>

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

// f() bracketed by phase p of `prof`; null (the host, or no profiler attached): f() alone.
template <typename F> auto timed(DitPhaseProfiler* prof, DitPhaseProfiler::Phase p, F&& f) {
  if (!prof) return f();
  prof->start(p);
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    prof->stop();
  } else {
    auto r = f();
    prof->stop();
    return r;
  }
}

}  // namespace vgen
