// The prefill over an understanding tower kept in pinned host memory (text.device stream, weights.h
// Cosmos3UndHost): layer i + 1 is copied into the other device slot on copy_stream() while layer i
// computes on compute_stream(), ordered by events, so the copies hide under the compute where it is
// longer. The layers compute with the same ops on the slots' views as on resident weights, so the
// prompt K/V are the same bits.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <mutex>

#include "core/cuda_stream.h"
#include "model/cosmos3/weights.h"

namespace vgen {

class Cosmos3UndStream {
 public:
  Cosmos3UndStream();
  // fn(i, layer i's tower on the device) for i = 0, 1, ... until fn returns false or i reaches the
  // host's layer count; fn queues its work on compute_stream(). One prefill at a time.
  void run(const Cosmos3UndHost& host, const std::function<bool(size_t, const Cosmos3Tower&)>& fn) const;

 private:
  // Queues the copy of `layer` into slot `slot` behind the last compute that read that slot.
  void copy(const Cosmos3UndHost& host, size_t layer, size_t slot) const;

  mutable std::mutex mu_;
  mutable std::array<CudaEvent, 2> copied_, used_;
};

}  // namespace vgen
