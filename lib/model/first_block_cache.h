// First-Block Cache of the DiT (recipe cache_config.first_block_threshold): ParaAttention's FBCache
// scheme, made to decide the same on every mesh. One cache serves one CFG stream of one expert for
// one denoising loop. After block 0, the forward compares block 0's update of x (r = x1 − x0) with
// the one of the last fully computed step: change = Σ|r − r_ref| / Σ|r_ref| over the real tokens of
// the whole sequence, gathered over the sequence group and summed in one order on every rank, so
// every rank of the group takes the same decision bit for bit (ranks that disagreed would wait on
// each other's attention). A mesh takes one rank's decisions unless a change lies within float
// rounding (~1e-6 relative) of the threshold. Below the threshold the other blocks are
// skipped and x gains their update of that step instead; otherwise they run and the step becomes
// the reference. Approximate by design: it trades fidelity for speed.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dist/communicator.h"
#include "parallel/seq_attention.h"

namespace vgen {

class FirstBlockCache {
 public:
  explicit FirstBlockCache(double threshold = 0.0) : threshold_(threshold) {}
  bool enabled() const { return threshold_ > 0.0; }
  double threshold() const { return threshold_; }
  // The sequence group of the forwards (null or a group of one: this rank alone). Device forwards
  // need a group that moves device tensors.
  void set_group(Communicator* seq) { group_ = seq; }

  // One forward of an enabled cache, x [B, S_loc, D] of this rank's shard: begin(x) with block
  // 0's input; try_skip(x) with its output (true: the other blocks are skipped and x already holds
  // their cached update; false: run them); end(x) after the last block, which makes a fully
  // computed forward the reference.
  void begin(const Tensor& x);
  bool try_skip(Tensor& x, const SeqLayout& layout);
  void end(const Tensor& x);

  // Drops the reference tensors (two [B, S_loc, D] per cache) and keeps the counts: for a cache
  // that will not run again (the high-noise expert after the Wan 2.2 switch).
  void release() { first_ref_ = rest_ = x0_ = x1_ = pending_ = Tensor(); }

  int64_t hits() const { return hits_; }          // forwards whose other blocks were skipped
  int64_t forwards() const { return forwards_; }  // forwards that reached the decision
  double last_change() const { return last_change_; }  // of the last decision; −1 before a reference

 private:
  double threshold_ = 0.0;
  Communicator* group_ = nullptr;
  Tensor first_ref_;  // block 0's update at the reference step [B, S_loc, D]
  Tensor rest_;       // the other blocks' update at the reference step [B, S_loc, D]
  Tensor x0_, x1_;    // this forward's block 0 input and (not skipped) output
  Tensor pending_;    // this forward's block 0 update until end()
  int64_t hits_ = 0, forwards_ = 0;
  double last_change_ = -1.0;
};

}  // namespace vgen
