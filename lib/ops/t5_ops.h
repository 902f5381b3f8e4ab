// Tensor-level T5 ops (RMS norm, relative position bias, gated activation, biased attention, the
// embedding lookup), dispatched by device: host f32 tensors go to the CPU references in kernels/t5/,
// device tensors to the launchers of ops/t5_device_ops.h (f32 or bf16, each result in the dtype of
// its main input).
#pragma once
#include <vector>

#include "core/tensor.h"
#include "kernels/t5/gated_act_ref.h"

namespace vgen {

// x [..., D], w [D] → [..., D]
Tensor t5_rms_norm(const Tensor& x, const Tensor& w, float eps);

// The relative positions of one sequence's Lq queries and Lk keys, made once for all its layers:
// on the device the bucket of every offset (uploaded once); the host's reference takes the
// arguments and computes the buckets itself.
struct T5Positions {
  int64_t Lq = 0, Lk = 0;
  bool bidirectional = true;
  int max_distance = 0;
  Tensor buckets;  // device: i64 [Lq + Lk − 1] (t5_relative_buckets); host: undefined
};
T5Positions t5_positions(int64_t Lq, int64_t Lk, bool bidirectional, int num_buckets, int max_distance,
                         Device device);

// table [num_buckets, H] → bias f32 [H, Lq + Lk − 1] (index rel + Lq − 1 for rel = key − query).
Tensor t5_relative_bias(const Tensor& table, const T5Positions& pos);

// Bucket of every offset rel = key − query, rel ∈ [−(Lq−1), Lk−1], from kern::t5_relative_bucket
// → i64 [Lq + Lk − 1] on the host.
Tensor t5_relative_buckets(int64_t Lq, int64_t Lk, bool bidirectional, int num_buckets, int max_distance);

// gate [..., F], lin [..., F] or undefined → act(gate) (⊙ lin) [..., F]
Tensor t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act);

// q [Lq, H·D], k/v [Lk, H·D], rel_bias f32 [H, Lq+Lk−1] or undefined → [Lq, H·D]; keys ≥ num_valid masked.
Tensor t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                    int64_t num_valid);

// Rows `ids` of table [vocab, D] on table's device → [ids.size(), D]; every id in [0, vocab)
// (checked by the caller).
Tensor embedding(const Tensor& table, const std::vector<int64_t>& ids);

}  // namespace vgen
