// Tensor-level T5 ops (RMS norm, relative position bias, gated activation, biased attention):
// dispatch to the CPU references in kernels/t5/ (CUDA launchers to come with the same contracts).
#pragma once
#include "core/tensor.h"
#include "kernels/t5/gated_act_ref.h"

namespace vgen {

// x [..., D], w [D] → [..., D]
Tensor t5_rms_norm(const Tensor& x, const Tensor& w, float eps);

// table [num_buckets, H] → bias [H, Lq + Lk − 1] (index rel + Lq − 1 for rel = key − query).
Tensor t5_relative_bias(const Tensor& table, int64_t Lq, int64_t Lk, bool bidirectional, int max_distance);

// gate [..., F], lin [..., F] or undefined → act(gate) (⊙ lin) [..., F]
Tensor t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act);

// q [Lq, H·D], k/v [Lk, H·D], rel_bias [H, Lq+Lk−1] or undefined → [Lq, H·D]; keys ≥ num_valid masked.
Tensor t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                    int64_t num_valid);

// Residual add a += b (same shape, f32).
void t5_residual_add(Tensor& a, const Tensor& b);

}  // namespace vgen
