#include "parallel/attention2d.h"

#include <algorithm>

#include "ops/device_ops.h"
#include "parallel/block_attention.h"
#include "parallel/seq_shuffle.h"
#include "parallel/ulysses.h"

namespace vgen {

int64_t attention2d_valid_keys(int64_t tokens, int64_t shard, int R, int C, int c) {
  int64_t valid = 0;
  for (int r = 0; r < R; ++r) valid += std::clamp<int64_t>(tokens - int64_t(r * C + c) * shard, 0, shard);
  return valid;
}

Attention2D::Attention2D(std::shared_ptr<Communicator> row, std::shared_ptr<Communicator> col)
    : row_(std::move(row)), col_(std::move(col)) {
  VGEN_ASSERT(row_ != nullptr && col_ != nullptr, "Attention2D needs row and column communicators");
}

Tensor Attention2D::forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                                const AttentionPolicy& policy) {
  return run(q, k, v, nullptr, layout, policy);
}

Tensor Attention2D::forward_prefixed(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv& prefix,
                                     const SeqLayout& layout, const AttentionPolicy& policy) {
  check_prefix(q, prefix, "Attention2D");
  return run(q, k, v, &prefix, layout, policy);
}

Tensor Attention2D::run(const Tensor& q, const Tensor& k, const Tensor& v, const PrefixKv* prefix,
                        const SeqLayout& layout, const AttentionPolicy& policy) {
  check_seq_inputs(q, k, v, layout, "Attention2D");
  const int R = col_->size(), C = row_->size(), r = col_->rank(), c = row_->rank();
  VGEN_ASSERT(layout.degree == R * C && layout.seq_rank == r * C + c,
              "Attention2D: block {} of degree {} is not grid cell ({}, {}) of {}x{}", layout.seq_rank,
              layout.degree, r, c, R, C);
  const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), KVH = k.dim(2), D = q.dim(3);
  const Device dev = q.device();
  const DType dt = q.dtype();  // Q/K/V travel in the input dtype; partials are exchanged and merged in fp32

  // 1. Q of the whole row: the contiguous tokens [r·C·L, (r+1)·C·L).
  Tensor qrow = q;  // [B, C·L, H, D]
  if (C > 1) {
    Tensor recv = Tensor::empty({C, B, L, H, D}, dt, dev);
    row_->all_gather(q, recv);
    qrow = Tensor::empty({B, C * L, H, D}, dt, dev);
    gathered_to_seq(recv, C, 1, 0, qrow);
  }

  // 2. K/V of the whole column in one collective: shards r·C + c for r = 0..R-1, in r order, with
  //    their KVH heads (grouped K/V are expanded by block_attention only).
  Tensor kcol = k, vcol = v;  // [B, R·L, KVH, D]
  if (R > 1) {
    Tensor send = Tensor::empty({2, B, L, KVH, D}, dt, dev);
    stack_pair(k, v, send);
    Tensor recv = Tensor::empty({R, 2, B, L, KVH, D}, dt, dev);
    col_->all_gather(send, recv);
    kcol = Tensor::empty({B, R * L, KVH, D}, dt, dev);
    vcol = Tensor::empty({B, R * L, KVH, D}, dt, dev);
    gathered_to_seq(recv, R, 2, 0, kcol);
    gathered_to_seq(recv, R, 2, 1, vcol);
  }

  // 3. One attention of the row's queries against the column's keys.
  const int64_t valid = attention2d_valid_keys(layout.tokens, L, R, C, c);
  // bf16 on the device: the partial is written in bf16 (cuDNN SDPA, ~2.5x the rate of an fp32-output
  // kernel) and widened once to fp32 for the exchange and merge.
  const DType part_dt = !q.is_cpu() && dt == DType::kBF16 ? DType::kBF16 : DType::kF32;
  Tensor o = Tensor::empty({B, C * L, H, D}, part_dt, dev);  // partial over this column's keys
  Tensor lse = Tensor::empty({B, H, C * L}, DType::kF32, dev);
  block_attention(qrow, kcol, vcol, valid, o, &lse, policy);
  if (C == 1 && !prefix) return o;
  if (part_dt != DType::kF32) o = cast(o, DType::kF32);
  if (C == 1) {  // qrow is q: the prefix block merges into the one partial
    merge_prefix_block(q, *prefix, o, lse, policy);
    return part_dt == DType::kF32 ? o : cast(o, part_dt);
  }

  // 4. The C members of the row hold partials for the same queries over disjoint keys: send the
  //    rows of shard j (= column j) to column j with their LSE, then combine in fp32.
  const int64_t chunk = out_lse_chunk(B, L, H, D);
  Tensor send = Tensor::empty({C, chunk}, DType::kF32, dev);
  Tensor recv = Tensor::empty({C, chunk}, DType::kF32, dev);
  pack_out_lse(o, lse, C, send);
  row_->all_to_all(send, recv);
  Tensor out = Tensor::empty({B, L, H, D}, DType::kF32, dev);  // [B, S_loc, H, D]
  Tensor out_lse = Tensor::empty({B, H, L}, DType::kF32, dev);
  out.copy_from(chunk_out(recv, C, 0, B, L, H, D));
  out_lse.copy_from(chunk_lse(recv, C, 0, B, L, H, D));
  for (int j = 1; j < C; ++j)
    block_attention_merge(out, out_lse, chunk_out(recv, C, j, B, L, H, D), chunk_lse(recv, C, j, B, L, H, D));
  if (prefix) merge_prefix_block(q, *prefix, out, out_lse, policy);  // [B, S_loc, H, D]
  // One rounding of the fp32 merge to the input dtype (halves an enclosing Ulysses exchange).
  return part_dt == DType::kF32 ? out : cast(out, part_dt);
}

}  // namespace vgen
