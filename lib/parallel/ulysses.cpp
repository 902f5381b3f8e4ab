#include "parallel/ulysses.h"

#include <algorithm>
#include <vector>

#include "ops/device_ops.h"
#include "parallel/block_attention.h"
#include "parallel/seq_shuffle.h"

namespace vgen {

void check_seq_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout, const char* who) {
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && v.shape() == k.shape() && k.dim(0) == q.dim(0) &&
                  k.dim(1) == q.dim(1) && k.dim(3) == q.dim(3),
              "{}: q {}, k {}, v {} must be [B, S_loc, H, Dh] and [B, S_loc, KVH, Dh]", who, q.str(), k.str(), v.str());
  kv_head_groups(q, k, who);  // kModel before any collective: every rank of the group throws alike
  VGEN_ASSERT(layout.degree >= 1 && layout.padded % layout.degree == 0 && layout.padded >= layout.tokens &&
                  layout.seq_rank >= 0 && layout.seq_rank < layout.degree,
              "{}: bad layout (tokens {}, padded {}, degree {}, rank {})", who, layout.tokens, layout.padded,
              layout.degree, layout.seq_rank);
  VGEN_ASSERT(q.dim(1) == layout.local(), "{}: q {} holds {} tokens, the layout says {} per rank", who, q.str(),
              q.dim(1), layout.local());
}

SeqLayout ulysses_inner_layout(const SeqLayout& outer, int U) {
  SeqLayout l = outer;
  l.degree = outer.degree / U;
  l.seq_rank = outer.seq_rank / U;
  return l;
}

UlyssesAttention::UlyssesAttention(std::shared_ptr<Communicator> ulysses, std::unique_ptr<SeqAttention> inner,
                                   int head_groups)
    : comm_(std::move(ulysses)), inner_(std::move(inner)), head_groups_(std::max(1, head_groups)) {
  VGEN_ASSERT(comm_ != nullptr, "Ulysses attention needs a communicator");
}

// Attention of one head shard [B, U·L, Hg, D] on the CP block (inner) or locally.
Tensor UlyssesAttention::shard_attention(const Tensor& qh, const Tensor& kh, const Tensor& vh,
                                         const SeqLayout& layout, const AttentionPolicy& policy) {
  const int U = comm_->size();
  const SeqLayout inner_layout = ulysses_inner_layout(layout, U);
  if (inner_) return inner_->forward(qh, kh, vh, inner_layout, policy);
  VGEN_ASSERT(inner_layout.degree == 1, "Ulysses without a CP attention needs degree SP == U ({} != {})",
              layout.degree, U);
  Tensor oh = Tensor::empty(qh.shape(), qh.dtype(), qh.device());  // [B, U·L, Hg, D]
  block_attention(qh, kh, vh, std::min(layout.tokens, qh.dim(1)), oh, nullptr, policy);
  return oh;
}

// Async: the heads of each rank's shard are cut into G groups; every group's Q/K/V all-to-all is
// queued at once (side stream on the device), the attention of group g starts when its exchange
// has arrived, and its output all-to-all overlaps the attention of group g+1. The same head
// ranges and collectives run in the same order on every rank (on the host they complete at once).
Tensor UlyssesAttention::forward_pipelined(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                           int G, const AttentionPolicy& policy) {
  const int U = comm_->size();
  const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), D = q.dim(3), Hu = H / U;
  const Device dev = q.device();
  const DType dt = q.dtype();
  auto group_begin = [&](int g) { return Hu * g / G; };
  const size_t n = size_t(G);
  std::vector<std::unique_ptr<Communicator::Pending>> in(n), out_pending(n);
  std::vector<Tensor> recv(n), orecv(n);
  for (int g = 0; g < G; ++g) {
    const int64_t h0 = group_begin(g), Hg = group_begin(g + 1) - h0;
    Tensor send = Tensor::empty({U, 3, B, L, Hg, D}, dt, dev);  // [U, 3, B, L, Hg, D]
    recv[size_t(g)] = Tensor::empty({U, 3, B, L, Hg, D}, dt, dev);
    ulysses_pack_qkv(q, k, v, U, send, h0);
    in[size_t(g)] = comm_->start_all_to_all(send, recv[size_t(g)]);
  }
  DType odt = dt;
  for (int g = 0; g < G; ++g) {
    const int64_t Hg = group_begin(g + 1) - group_begin(g);
    in[size_t(g)]->wait();
    Tensor qh = Tensor::empty({B, U * L, Hg, D}, dt, dev);  // [B, S/CP, Hg, D]
    Tensor kh = Tensor::empty({B, U * L, Hg, D}, dt, dev);
    Tensor vh = Tensor::empty({B, U * L, Hg, D}, dt, dev);
    ulysses_unpack_qkv(recv[size_t(g)], U, qh, kh, vh);
    recv[size_t(g)] = Tensor();
    Tensor oh = shard_attention(qh, kh, vh, layout, policy);  // [B, U·L, Hg, D]
    odt = oh.dtype();
    Tensor osend = Tensor::empty({U, B, L, Hg, D}, odt, dev);
    orecv[size_t(g)] = Tensor::empty({U, B, L, Hg, D}, odt, dev);
    ulysses_pack_out(oh, U, osend);
    out_pending[size_t(g)] = comm_->start_all_to_all(osend, orecv[size_t(g)]);
  }
  Tensor out = Tensor::empty({B, L, H, D}, odt, dev);  // [B, S_loc, H, D]
  for (int g = 0; g < G; ++g) {
    out_pending[size_t(g)]->wait();
    ulysses_unpack_out(orecv[size_t(g)], U, out, group_begin(g));
  }
  return out;
}

void UlyssesAttention::check_forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout) {
  check_seq_inputs(q, k, v, layout, "Ulysses attention");
  const int U = comm_->size();
  const int64_t H = q.dim(2);
  // Checked before any collective, so every rank of the group throws the same error.
  VGEN_CHECK(H % U == 0, ExitCode::kRecipe,
             "parallel_config.ulysses_size = {} does not divide the number of attention heads {} (q {})", U, H,
             q.str());
  VGEN_ASSERT(layout.degree % U == 0 && layout.seq_rank % U == comm_->rank(),
              "Ulysses attention: seq rank {} of degree {} is not group rank {} of {}", layout.seq_rank,
              layout.degree, comm_->rank(), U);
}

// Sequence shards -> head shards: [B, L, H, D] x3 -> [B, U·L, H/U, D] x3, one collective.
UlyssesAttention::HeadShards UlyssesAttention::to_head_shards(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int U = comm_->size();
  const int64_t B = q.dim(0), L = q.dim(1), Hu = q.dim(2) / U, D = q.dim(3);
  const Device dev = q.device();
  const DType dt = q.dtype();  // f32 on the host; bf16 or f32 on the device
  Tensor send = Tensor::empty({U, 3, B, L, Hu, D}, dt, dev);
  Tensor recv = Tensor::empty({U, 3, B, L, Hu, D}, dt, dev);
  ulysses_pack_qkv(q, k, v, U, send);
  comm_->all_to_all(send, recv);
  HeadShards h;
  h.q = Tensor::empty({B, U * L, Hu, D}, dt, dev);  // [B, S/CP, H/U, D]
  h.k = Tensor::empty({B, U * L, Hu, D}, dt, dev);
  h.v = Tensor::empty({B, U * L, Hu, D}, dt, dev);
  ulysses_unpack_qkv(recv, U, h.q, h.k, h.v);
  return h;
}

// Head shards -> sequence shards: oh [B, U·L, H/U, D] -> [B, L, H, D].
Tensor UlyssesAttention::to_seq_shards(const Tensor& oh, int64_t H) {
  const int U = comm_->size();
  const int64_t B = oh.dim(0), L = oh.dim(1) / U, Hu = oh.dim(2), D = oh.dim(3);
  const Device dev = oh.device();
  Tensor osend = Tensor::empty({U, B, L, Hu, D}, oh.dtype(), dev);
  Tensor orecv = Tensor::empty({U, B, L, Hu, D}, oh.dtype(), dev);
  ulysses_pack_out(oh, U, osend);
  comm_->all_to_all(osend, orecv);
  Tensor out = Tensor::empty({B, L, H, D}, oh.dtype(), dev);  // [B, S_loc, H, D]
  ulysses_unpack_out(orecv, U, out);
  return out;
}

Tensor UlyssesAttention::forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                const AttentionPolicy& policy) {
  check_forward(q, k, v, layout);
  const int U = comm_->size();
  const int64_t Hu = q.dim(2) / U;
  // On the device an inner Ring/Attention2D would run its NCCL communicator concurrently with the
  // Ulysses side stream, which NCCL does not guarantee to be deadlock-free: one group there.
  const int G = inner_ && !q.is_cpu() ? 1 : int(std::min<int64_t>(head_groups_, Hu));
  if (k.dim(2) != q.dim(2)) return forward_grouped(q, k, v, layout, G, policy);
  if (G > 1) return forward_pipelined(q, k, v, layout, G, policy);
  const HeadShards h = to_head_shards(q, k, v);
  const Tensor oh = shard_attention(h.q, h.k, h.v, layout, policy);  // [B, U·L, H/U, D]
  return to_seq_shards(oh, q.dim(2));
}

Tensor UlyssesAttention::forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                                          const SeqLayout& layout, const AttentionPolicy& policy) {
  check_forward(q, k, v, layout);
  check_prefix(q, prefix, "Ulysses attention");
  const int U = comm_->size();
  const int64_t B = q.dim(0), Hu = q.dim(2) / U;
  const PrefixKv ph = prefix_head_shard(prefix);  // [B, P, H/U or R/U, D]
  const HeadShards h = k.dim(2) == q.dim(2) ? to_head_shards(q, k, v) : to_head_shards_grouped(q, k, v);
  const SeqLayout inner_layout = ulysses_inner_layout(layout, U);
  Tensor oh;  // [B, U·L, H/U, D]
  if (inner_) {
    oh = seq_attention_with_prefix(*inner_, h.q, h.k, h.v, ph, inner_layout, policy);
  } else {
    VGEN_ASSERT(inner_layout.degree == 1, "Ulysses without a CP attention needs degree SP == U ({} != {})",
                layout.degree, U);
    const int64_t S = h.q.dim(1);
    oh = Tensor::empty(h.q.shape(), DType::kF32, q.device());       // [B, U·L, H/U, D] f32
    Tensor lse = Tensor::empty({B, Hu, S}, DType::kF32, q.device());  // [B, H/U, U·L]
    block_attention(h.q, h.k, h.v, std::min(layout.tokens, S), oh, &lse, policy);
    merge_prefix_block(h.q, ph, oh, lse, policy);
    if (oh.dtype() != q.dtype()) oh = cast(oh, q.dtype());  // one rounding before the exchange
  }
  return to_seq_shards(oh, q.dim(2));
}

}  // namespace vgen
