// Ring attention over the CP group (parallel_reference.md §2.5): K/V blocks rotate P-1 times,
// rank i sending to (i+1) mod P and receiving from (i-1) mod P into a second buffer while the
// local attention of the block in hand runs; partial results merge in fp32 through their LSE.
#pragma once
#include <memory>

#include "dist/communicator.h"
#include "parallel/prefix_attention.h"
#include "parallel/seq_attention.h"

namespace vgen {

class RingAttention : public SeqAttention {
 public:
  explicit RingAttention(std::shared_ptr<Communicator> ring);
  // layout: degree = ring size, seq_rank = ring rank (the CP block index).
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override;
  // As forward with a prefix K/V ([B, P, KVH, Dh], whole on every rank): the prefix is the first
  // key block, attended locally; the rotating blocks merge into it (prefix_attention.h).
  Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) override;

 private:
  Tensor run(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv* prefix, const SeqLayout& layout,
             const AttentionPolicy& policy);

  std::shared_ptr<Communicator> comm_;
};

}  // namespace vgen
