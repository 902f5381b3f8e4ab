// Ulysses sequence parallelism (parallel_reference.md §2.3, §2.7): one fused all-to-all turns the
// U sequence shards of Q, K and V into head shards (group rank u gets heads [u·H/U, (u+1)·H/U) of the
// contiguous block of U shards), the inner CP attention (or local attention when there is no CP
// axis) runs on that block, and one all-to-all returns the output to sequence shards.
#pragma once
#include <memory>

#include "dist/communicator.h"
#include "parallel/prefix_attention.h"
#include "parallel/seq_attention.h"

namespace vgen {

class UlyssesAttention : public SeqAttention {
 public:
  // `inner` works on the CP block (layout degree SP/U, rank seq_rank/U); null = local attention.
  // head_groups > 1 (async Ulysses, parallel_config.async_ulysses): each rank's heads are cut into
  // that many groups (at most H/U) whose all-to-alls overlap the attention of the others; the
  // result is the same as with one group. On the device only without an inner CP attention (two
  // NCCL communicators running concurrently are not guaranteed deadlock-free).
  UlyssesAttention(std::shared_ptr<Communicator> ulysses, std::unique_ptr<SeqAttention> inner, int head_groups = 1);
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override;
  // As forward with a prefix K/V ([B, P, H, Dh], whole on every rank): each rank attends its head
  // shard to the same heads of the prefix, merged through the LSE (prefix_attention.h); with a CP
  // level the prefix's head shard goes down to it. One head group (async Ulysses gives the same result).
  Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) override;

 private:
  struct HeadShards {
    Tensor q, k, v;  // [B, U·L, H/U, D]
  };
  void check_forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout);
  HeadShards to_head_shards(const Tensor& q, const Tensor& k, const Tensor& v);
  Tensor to_seq_shards(const Tensor& oh, int64_t H);
  Tensor shard_attention(const Tensor& qh, const Tensor& kh, const Tensor& vh, const SeqLayout& layout,
                         const AttentionPolicy& policy);
  Tensor forward_pipelined(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, int G,
                           const AttentionPolicy& policy);

  std::shared_ptr<Communicator> comm_;
  std::unique_ptr<SeqAttention> inner_;
  int head_groups_ = 1;
};

// Head groups of async Ulysses (parallel_config.async_ulysses: true).
constexpr int kAsyncUlyssesHeadGroups = 4;

// The layout the CP level sees under Ulysses degree U: the same global tokens, the block index
// cp_rank = seq_rank / U and the degree SP / U.
SeqLayout ulysses_inner_layout(const SeqLayout& outer, int U);

// Shared shape checks of the SeqAttention implementations: q, k, v [B, layout.local(), H, D].
void check_seq_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, const char* who);

}  // namespace vgen
