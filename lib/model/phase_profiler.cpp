#include "model/phase_profiler.h"

#include "core/error.h"

namespace vgen {

const char* DitPhaseProfiler::name(Phase p) {
  switch (p) {
    case kGemm: return "gemm";
    case kSelfAttention: return "self_attention";
    case kCrossAttention: return "cross_attention";
    default: return "other";
  }
}

void DitPhaseProfiler::start(Phase p) {
  VGEN_ASSERT(!running_, "DitPhaseProfiler: nested start ({} inside {})", name(p), name(current_));
  current_ = p;
  running_ = true;
  ++calls_[p];
  timers_[p].start();
}

void DitPhaseProfiler::stop() {
  VGEN_ASSERT(running_, "DitPhaseProfiler: stop without start");
  timers_[current_].stop();
  running_ = false;
}

double DitPhaseProfiler::seconds(Phase p) { return calls_[p] ? timers_[p].total() : 0.0; }

}  // namespace vgen
