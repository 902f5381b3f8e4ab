// Ulysses sequence parallelism (parallel_reference.md §2.3, §2.7): one fused all-to-all turns the
// U sequence shards of Q, K and V into head shards (group rank u gets heads [u·H/U, (u+1)·H/U) of the
// contiguous block of U shards), the inner CP attention (or local attention when there is no CP
// axis) runs on that block, and one all-to-all returns the output to sequence shards.
#pragma once
#include <memory>

#include "dist/communicator.h"
#include "parallel/seq_attention.h"

namespace vgen {

class UlyssesAttention : public SeqAttention {
 public:
  // `inner` works on the CP block (layout degree SP/U, rank seq_rank/U); null = local attention.
  UlyssesAttention(std::shared_ptr<Communicator> ulysses, std::unique_ptr<SeqAttention> inner);
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout) override;

 private:
  std::shared_ptr<Communicator> comm_;
  std::unique_ptr<SeqAttention> inner_;
};

// The layout the CP level sees under Ulysses degree U: the same global tokens, the block index
// cp_rank = seq_rank / U and the degree SP / U.
SeqLayout ulysses_inner_layout(const SeqLayout& outer, int U);

// Shared shape checks of the SeqAttention implementations: q, k, v [B, layout.local(), H, D].
void check_seq_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, const char* who);

}  // namespace vgen
