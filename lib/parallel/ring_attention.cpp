#include "parallel/ring_attention.h"

#include <algorithm>

#include "ops/device_ops.h"
#include "parallel/block_attention.h"
#include "parallel/seq_shuffle.h"
#include "parallel/ulysses.h"

namespace vgen {
namespace {
constexpr int kRingTag = 71;
}

RingAttention::RingAttention(std::shared_ptr<Communicator> ring) : comm_(std::move(ring)) {
  VGEN_ASSERT(comm_ != nullptr, "Ring attention needs a communicator");
}

Tensor RingAttention::forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                const AttentionPolicy& policy) {
  return run(q, k, v, nullptr, layout, policy);
}

Tensor RingAttention::forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                                       const SeqLayout& layout, const AttentionPolicy& policy) {
  check_prefix(q, prefix, "Ring attention");
  return run(q, k, v, &prefix, layout, policy);
}

Tensor RingAttention::run(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv* prefix,
                          const SeqLayout& layout, const AttentionPolicy& policy) {
  check_seq_inputs(q, k, v, layout, "Ring attention");
  const int P = comm_->size(), me = comm_->rank();
  VGEN_ASSERT(layout.degree == P && layout.seq_rank == me,
              "Ring attention: block {} of degree {} is not ring rank {} of {}", layout.seq_rank, layout.degree, me,
              P);
  const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), KVH = k.dim(2), D = q.dim(3);
  const Device dev = q.device();
  const int next = (me + 1) % P, prev = (me + P - 1) % P;

  // Double buffer: the block in hand is read by the attention while the next one arrives.
  // K/V travel in the input dtype (bf16 on the device path) with their KVH heads (grouped K/V are
  // expanded by block_attention only); outputs and LSE accumulate in fp32.
  Tensor kv[2] = {Tensor::empty({2, B, L, KVH, D}, q.dtype(), dev),
                  Tensor::empty({2, B, L, KVH, D}, q.dtype(), dev)};
  stack_pair(k, v, kv[0]);

  // bf16 on the device: block partials are bf16 (what cuDNN SDPA writes, at ~2.5x the rate of an
  // fp32-output kernel) and merge into the fp32 accumulator; elsewhere partials are fp32.
  const DType part_dt = !q.is_cpu() && q.dtype() == DType::kBF16 ? DType::kBF16 : DType::kF32;
  // fp32 accumulators: written by the first valid block (bf16 path: replaced by its widened copy)
  Tensor out = part_dt == DType::kF32 ? Tensor::zeros({B, L, H, D}, DType::kF32, dev) : Tensor();
  Tensor lse = Tensor::empty({B, H, L}, DType::kF32, dev);
  Tensor part_out, part_lse;
  bool have = false;
  if (prefix) {  // the prefix is every rank's first block: all keys valid, fp32 accumulator
    out = Tensor::empty({B, L, H, D}, DType::kF32, dev);
    block_attention(q, prefix->k, prefix->v, prefix->k.dim(1), out, &lse, policy);
    have = true;
  }
  for (int step = 0; step < P; ++step) {
    const int cur = step % 2;
    std::unique_ptr<Communicator::Pending> pending;
    if (step < P - 1) pending = comm_->start_sendrecv(kv[cur], next, kv[1 - cur], prev, kRingTag);

    // After `step` rotations we hold the block that started on rank (me - step) mod P.
    const int64_t block = (me - step + P) % P;
    const int64_t valid = std::clamp<int64_t>(layout.tokens - block * L, 0, L);
    if (valid > 0) {  // an all-padding block has lse = -inf everywhere: merging it is a no-op
      const Tensor kb = kv[cur][0], vb = kv[cur][1];  // [B, L, KVH, D]
      if (!have && part_dt == DType::kF32) {
        block_attention(q, kb, vb, valid, out, &lse, policy);
      } else if (!have) {
        Tensor first = Tensor::empty({B, L, H, D}, part_dt, dev);  // [B, L, H, D]
        block_attention(q, kb, vb, valid, first, &lse, policy);
        out = cast(first, DType::kF32);
      } else {
        if (!part_out.defined()) {
          part_out = Tensor::empty({B, L, H, D}, part_dt, dev);
          part_lse = Tensor::empty({B, H, L}, DType::kF32, dev);
        }
        block_attention(q, kb, vb, valid, part_out, &part_lse, policy);
        block_attention_merge(out, lse, part_out, part_lse);
      }
      have = true;
    }
    if (pending) pending->wait();
  }
  if (!out.defined()) return Tensor::zeros({B, L, H, D}, part_dt, dev);  // no valid key in any block
  // One rounding of the fp32 merge to the input dtype (halves an enclosing Ulysses exchange).
  return part_dt == DType::kF32 ? out : cast(out, part_dt);
}

}  // namespace vgen
