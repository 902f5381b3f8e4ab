// Ulysses with grouped K/V heads (ulysses.h): Q moves with its H/U heads per rank, K and V with the
// R/U heads (R = lcm(KVH, U)) those queries read, all three in one all-to-all per head group.
#include <numeric>
#include <vector>

#include "ops/gqa/gqa_ops.h"
#include "parallel/seq_shuffle.h"
#include "parallel/ulysses.h"

namespace vgen {

int64_t ulysses_kv_heads(int64_t kv_heads, int U) { return std::lcm(kv_heads, int64_t(U)); }

std::vector<UlyssesHeadGroup> ulysses_head_groups(int64_t hu, int64_t ru, int G) {
  VGEN_ASSERT(ru >= 1 && hu % ru == 0 && G >= 1 && G <= hu, "Ulysses head groups: {} groups of {} query heads over {} "
              "K/V heads", G, hu, ru);
  const int64_t per = hu / ru;  // query heads per K/V head
  std::vector<UlyssesHeadGroup> groups;
  if (ru >= G) {  // whole K/V heads per group, each with its queries
    for (int g = 0; g < G; ++g) {
      const int64_t k0 = ru * g / G, k1 = ru * (g + 1) / G;
      groups.push_back({k0 * per, (k1 - k0) * per, k0, k1 - k0});
    }
    return groups;
  }
  // Fewer K/V heads than groups: each K/V head's queries split into n groups (n <= per since G <= hu),
  // the K/V head sent with each of them.
  for (int64_t r = 0; r < ru; ++r) {
    const int64_t n = G * (r + 1) / ru - G * r / ru;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = per * i / n, b = per * (i + 1) / n;
      groups.push_back({r * per + a, b - a, r, 1});
    }
  }
  return groups;
}

// Sequence shards -> one head group's send [U, chunk]: per destination its query heads
// [B, L, nq, D], then its K and V heads [B, L, nk, D] each (kr, vr: [B, L, R, D]).
Tensor UlyssesAttention::pack_grouped(const Tensor& q, const Tensor& kr, const Tensor& vr,
                                      const UlyssesHeadGroup& g) const {
  const int U = comm_->size();
  const int64_t B = q.dim(0), L = q.dim(1), D = q.dim(3), qpart = B * L * g.nq * D, kpart = B * L * g.nk * D;
  Tensor send = Tensor::empty({U, qpart + 2 * kpart}, q.dtype(), q.device());  // [U, chunk]
  ulysses_pack_heads(q, U, g.q0, g.nq, send, 0);
  ulysses_pack_heads(kr, U, g.k0, g.nk, send, qpart);
  ulysses_pack_heads(vr, U, g.k0, g.nk, send, qpart + kpart);
  return send;
}

// recv [U(src), chunk] -> q [B, U·L, nq, D], k/v [B, U·L, nk, D].
UlyssesAttention::HeadShards UlyssesAttention::unpack_grouped(const Tensor& recv, const UlyssesHeadGroup& g,
                                                              const Tensor& q) const {
  const int U = comm_->size();
  const int64_t B = q.dim(0), L = q.dim(1), D = q.dim(3), qpart = B * L * g.nq * D, kpart = B * L * g.nk * D;
  HeadShards h;
  h.q = Tensor::empty({B, U * L, g.nq, D}, q.dtype(), q.device());  // [B, S/CP, nq, D]
  h.k = Tensor::empty({B, U * L, g.nk, D}, q.dtype(), q.device());  // [B, S/CP, nk, D]
  h.v = Tensor::empty({B, U * L, g.nk, D}, q.dtype(), q.device());
  ulysses_unpack_heads(recv, U, 0, h.q);
  ulysses_unpack_heads(recv, U, qpart, h.k);
  ulysses_unpack_heads(recv, U, qpart + kpart, h.v);
  return h;
}

// Sequence shards -> head shards: q [B, L, H, D] and k/v [B, L, KVH, D] -> q [B, U·L, H/U, D] and
// k/v [B, U·L, R/U, D], one collective.
UlyssesAttention::HeadShards UlyssesAttention::to_head_shards_grouped(const Tensor& q, const Tensor& k,
                                                                      const Tensor& v) {
  const int U = comm_->size();
  const int64_t KVH = k.dim(2), R = ulysses_kv_heads(KVH, U);
  const Tensor kr = repeat_kv_heads(k, R / KVH), vr = repeat_kv_heads(v, R / KVH);  // [B, L, R, D]
  const UlyssesHeadGroup all{0, q.dim(2) / U, 0, R / U};
  const Tensor send = pack_grouped(q, kr, vr, all);
  Tensor recv = Tensor::empty(send.shape(), send.dtype(), send.device());
  comm_->all_to_all(send, recv);
  return unpack_grouped(recv, all, q);
}

// As forward with grouped K/V heads: one head group as forward's blocking path, more as
// forward_pipelined (every group's exchange queued at once, its attention when it has arrived, its
// output exchange overlapping the next group's attention), the groups of ulysses_head_groups.
Tensor UlyssesAttention::forward_grouped(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                         int G, const AttentionPolicy& policy) {
  const int U = comm_->size();
  const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), D = q.dim(3), KVH = k.dim(2);
  if (G == 1) {
    const HeadShards h = to_head_shards_grouped(q, k, v);
    const Tensor oh = shard_attention(h.q, h.k, h.v, layout, policy);  // [B, U·L, H/U, D]
    return to_seq_shards(oh, H);
  }
  const int64_t R = ulysses_kv_heads(KVH, U);
  const Tensor kr = repeat_kv_heads(k, R / KVH), vr = repeat_kv_heads(v, R / KVH);  // [B, L, R, D]
  const std::vector<UlyssesHeadGroup> groups = ulysses_head_groups(H / U, R / U, G);
  const size_t n = groups.size();
  std::vector<std::unique_ptr<Communicator::Pending>> in(n), out_pending(n);
  std::vector<Tensor> recv(n), orecv(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor send = pack_grouped(q, kr, vr, groups[i]);  // [U, chunk]
    recv[i] = Tensor::empty(send.shape(), send.dtype(), send.device());
    in[i] = comm_->start_all_to_all(send, recv[i]);
  }
  DType odt = q.dtype();
  for (size_t i = 0; i < n; ++i) {
    in[i]->wait();
    const HeadShards h = unpack_grouped(recv[i], groups[i], q);
    recv[i] = Tensor();
    const Tensor oh = shard_attention(h.q, h.k, h.v, layout, policy);  // [B, U·L, nq, D]
    odt = oh.dtype();
    Tensor osend = Tensor::empty({U, B, L, groups[i].nq, D}, odt, q.device());
    orecv[i] = Tensor::empty({U, B, L, groups[i].nq, D}, odt, q.device());
    ulysses_pack_out(oh, U, osend);
    out_pending[i] = comm_->start_all_to_all(osend, orecv[i]);
  }
  Tensor out = Tensor::empty({B, L, H, D}, odt, q.device());  // [B, S_loc, H, D]
  for (size_t i = 0; i < n; ++i) {
    out_pending[i]->wait();
    ulysses_unpack_out(orecv[i], U, out, groups[i].q0);
  }
  return out;
}

// This rank's K/V heads of the prefix, no collective: [B, P, KVH, D] repeated to R = lcm(KVH, U)
// heads (a no-op where U divides KVH), then the heads [me·R/U, (me+1)·R/U) -> [B, P, R/U, D].
PrefixKv UlyssesAttention::prefix_head_shard(const PrefixKv& prefix) const {
  const int U = comm_->size(), me = comm_->rank();
  const int64_t B = prefix.k.dim(0), P = prefix.k.dim(1), KVH = prefix.k.dim(2), D = prefix.k.dim(3);
  const int64_t R = ulysses_kv_heads(KVH, U);
  const Tensor pk = repeat_kv_heads(prefix.k, R / KVH), pv = repeat_kv_heads(prefix.v, R / KVH);  // [B, P, R, D]
  Tensor packed = Tensor::empty({U, 3, B, P, R / U, D}, pk.dtype(), pk.device());  // [U, 3, B, P, R/U, D]
  ulysses_pack_qkv(pk, pv, pv, U, packed);
  const Tensor mine = packed[me];  // [3, B, P, R/U, D]
  return PrefixKv{mine[0], mine[1]};
}

}  // namespace vgen
