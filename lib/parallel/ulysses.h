// Ulysses sequence parallelism (parallel_reference.md §2.3, §2.7): one fused all-to-all turns the
// U sequence shards of Q, K and V into head shards (group rank u gets heads [u·H/U, (u+1)·H/U) of the
// contiguous block of U shards), the inner CP attention (or local attention when there is no CP
// axis) runs on that block, and one all-to-all returns the output to sequence shards.
// Grouped K/V heads (KVH < H, KVH | H): K/V move with R = lcm(KVH, U) heads, repeated locally from KVH
// only where U does not divide KVH; rank u gets K/V heads [u·R/U, (u+1)·R/U), those its query heads
// read. The heads are expanded to the queries' at the innermost attention call (block_attention).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dist/communicator.h"
#include "parallel/prefix_attention.h"
#include "parallel/seq_attention.h"

namespace vgen {

// K/V heads a Ulysses all-to-all of degree U moves for kv_heads K/V heads: lcm(kv_heads, U), so that
// every rank gets whole K/V heads (kv_heads itself when U divides it).
int64_t ulysses_kv_heads(int64_t kv_heads, int U);

// One head group of a rank's Ulysses shard with grouped K/V heads: query heads [q0, q0 + nq) and the
// K/V heads [k0, k0 + nk) they read, nq / nk query heads per K/V head (nk = 1 when a K/V head's
// queries are split over groups).
struct UlyssesHeadGroup {
  int64_t q0 = 0, nq = 0, k0 = 0, nk = 0;
};

// Up to G groups over hu query heads and ru K/V heads per rank (ru | hu, 1 <= G <= hu): G groups of
// whole K/V heads when ru >= G, else each K/V head's queries split into about G / ru groups.
std::vector<UlyssesHeadGroup> ulysses_head_groups(int64_t hu, int64_t ru, int G);

class UlyssesAttention : public SeqAttention {
 public:
  // `inner` works on the CP block (layout degree SP/U, rank seq_rank/U); null = local attention.
  // head_groups > 1 (async Ulysses, parallel_config.async_ulysses): each rank's heads are cut into
  // that many groups (at most H/U) whose all-to-alls overlap the attention of the others; the
  // result is the same as with one group. On the device only without an inner CP attention (two
  // NCCL communicators running concurrently are not guaranteed deadlock-free).
  UlyssesAttention(std::shared_ptr<Communicator> ulysses, std::unique_ptr<SeqAttention> inner, int head_groups = 1);
  // q [B, S_loc, H, Dh], k/v [B, S_loc, KVH, Dh] (KVH | H) -> [B, S_loc, H, Dh].
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override;
  // As forward with a prefix K/V ([B, P, KVH, Dh], whole on every rank): each rank attends its head
  // shard to the K/V heads of the prefix its query heads read (repeated to lcm(KVH, U) first where U
  // does not divide KVH), merged through the LSE (prefix_attention.h); with a CP level the prefix's
  // head shard goes down to it. One head group (async Ulysses gives the same result).
  Tensor forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) override;

 private:
  struct HeadShards {
    Tensor q, k, v;  // q [B, U·L, H/U, D], k/v [B, U·L, H/U, D] or, grouped, [B, U·L, R/U, D]
  };
  void check_forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout);
  HeadShards to_head_shards(const Tensor& q, const Tensor& k, const Tensor& v);
  // Grouped K/V heads (ulysses_gqa.cpp): one head group's Q and K/V in one all-to-all.
  Tensor pack_grouped(const Tensor& q, const Tensor& kr, const Tensor& vr, const UlyssesHeadGroup& g) const;
  HeadShards unpack_grouped(const Tensor& recv, const UlyssesHeadGroup& g, const Tensor& q) const;
  HeadShards to_head_shards_grouped(const Tensor& q, const Tensor& k, const Tensor& v);
  Tensor forward_grouped(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, int G,
                         const AttentionPolicy& policy);
  PrefixKv prefix_head_shard(const PrefixKv& prefix) const;
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

// Shared shape checks of the SeqAttention implementations: q [B, layout.local(), H, D], k and v
// [B, layout.local(), KVH, D] with KVH dividing H (kModel otherwise).
void check_seq_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, const char* who);

}  // namespace vgen
