// Data movement of the sequence-parallel attentions: the pack/unpack permutations around the
// collectives of Ulysses, Ring and Attention2D. Each is a pure copy between contiguous tensors:
// host f32 tensors are copied by host loops, device tensors of any dtype (bf16 on the GPU path) by
// the CUDA kernel kernels/seq_shuffle/copy_runs.cuh on compute_stream().
// Notation: B batch, L tokens per shard, H heads, D head dim, N peers (group size).
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace vgen {

// Ulysses, sequence shards -> head shards. q,k,v [B, L, H, D] -> send [U, 3, B, L, Hg, D]:
// destination-major, so chunk u (heads u·H/U + [h0, h0 + Hg)) is contiguous and one all-to-all
// moves Q, K and V together. Hg = H/U, h0 = 0 moves every head; smaller Hg moves one head group
// (async Ulysses pipelines the groups).
void ulysses_pack_qkv(const Tensor& q, const Tensor& k, const Tensor& v, int U, Tensor& send, int64_t h0 = 0);
// recv [U(src), 3, B, L, H/U, D] -> q,k,v [B, U·L, H/U, D]; sequence chunk i came from group rank i.
void ulysses_unpack_qkv(const Tensor& recv, int U, Tensor& q, Tensor& k, Tensor& v);
// Inverse direction for the output: out [B, U·L, H/U, D] -> send [U, B, L, H/U, D].
void ulysses_pack_out(const Tensor& out, int U, Tensor& send);
// recv [U(src), B, L, Hg, D] -> out [B, L, H, D]; the heads of source i go to i·H/U + [h0, h0 + Hg).
void ulysses_unpack_out(const Tensor& recv, int U, Tensor& out, int64_t h0 = 0);

// Ulysses with grouped K/V heads, where Q and K/V differ in heads: each tensor is one part of the
// destination's chunk. x [B, L, Hx, D] -> send [U, chunk]: chunk u gets heads u·Hx/U + [h0, h0 + Hg)
// of x as [B, L, Hg, D] at element `offset`.
void ulysses_pack_heads(const Tensor& x, int U, int64_t h0, int64_t Hg, Tensor& send, int64_t offset);
// recv [U(src), chunk]: the [B, L, Hg, D] part of chunk i at `offset` -> tokens i·L.. of x [B, U·L, Hg, D].
void ulysses_unpack_heads(const Tensor& recv, int U, int64_t offset, Tensor& x);

// Stacks tensors of one shape as [n, ...] (e.g. K and V before one fused collective).
void stack_pair(const Tensor& a, const Tensor& b, Tensor& out);  // out [2, ...]
// Gathered shards, source-major, to one sequence: recv [N, parts, B, L, H, D] (parts stacked per
// source, `part` selects one) -> out [B, N·L, H, D].
void gathered_to_seq(const Tensor& recv, int N, int parts, int part, Tensor& out);

// Attention2D output exchange. o [B, N·L, H, D] f32 and lse [B, H, N·L] f32 (queries of N shards)
// -> send [N, chunk] with chunk = B·L·H·D + B·H·L: chunk j holds the rows of shard j as
// o [B, L, H, D] followed by lse [B, H, L].
int64_t out_lse_chunk(int64_t B, int64_t L, int64_t H, int64_t D);
void pack_out_lse(const Tensor& o, const Tensor& lse, int N, Tensor& send);
// Views of one received chunk (no copy): o [B, L, H, D], lse [B, H, L].
Tensor chunk_out(const Tensor& recv, int N, int j, int64_t B, int64_t L, int64_t H, int64_t D);
Tensor chunk_lse(const Tensor& recv, int N, int j, int64_t B, int64_t L, int64_t H, int64_t D);

}  // namespace vgen
