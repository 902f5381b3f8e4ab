// Attention2D over an R x C grid of the CP group (parallel_reference.md §2.6): Q all-gather on the
// row group (the C contiguous shards r·C .. r·C+C-1), one fused K/V all-gather on the column group
// (the R strided shards r·C + c), one local attention with LSE, then the partial outputs and their
// LSE go back over the row group in one all-to-all and are combined in fp32.
#pragma once
#include <memory>

#include "dist/communicator.h"
#include "parallel/prefix_attention.h"
#include "parallel/seq_attention.h"

namespace vgen {

class Attention2D : public SeqAttention {
 public:
  // row: the C ranks of this grid row (group rank = column); col: the R ranks of this column
  // (group rank = row). cp_rank = row·C + col.
  Attention2D(std::shared_ptr<Communicator> row, std::shared_ptr<Communicator> col);
  // layout: degree = R·C, seq_rank = cp_rank.
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override;
  // As forward with a prefix K/V ([B, P, KVH, Dh], whole on every rank): after the row's combine each
  // rank merges its own queries' attention over the prefix, one more key block (prefix_attention.h).
  Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) override;

 private:
  Tensor run(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv* prefix, const SeqLayout& layout,
             const AttentionPolicy& policy);

  std::shared_ptr<Communicator> row_, col_;
};

// Valid keys among the column-gathered shards cp_r = r·C + c (r = 0..R-1) of `shard` tokens each:
// Σ_r clamp(tokens − cp_r·shard, 0, shard). Padding sits at the global tail, so they are a prefix.
int64_t attention2d_valid_keys(int64_t tokens, int64_t shard, int R, int C, int c);

}  // namespace vgen
