// Tensor-level device paths of the T5 op families (kernels/t5/*.cuh), the device side of the
// dispatching ops in ops/t5_ops.h. Activations are f32 or bf16 and each result has the dtype of
// its main input (bf16: the rounding points of transformers' eager bf16 modules, see the .cuh
// files). Everything is queued on compute_stream(); shapes, dtypes and devices are checked and
// named in errors.
//
// The definitions live in t5_device_ops_cuda.cpp; in a CPU-only build every function throws kUsage
// (t5_device_ops.cpp).
#pragma once
#include "core/tensor.h"
#include "kernels/t5/gated_act_ref.h"

namespace vgen {

// x [..., D] f32|bf16 on the device, w [D] of x's dtype → [..., D] (y = w ⊙ x·rsqrt(mean(x²)+eps)).
Tensor cuda_t5_rms_norm(const Tensor& x, const Tensor& w, float eps);

// gate [..., F], lin [..., F] of gate's dtype or undefined → act(gate) (⊙ lin) [..., F].
Tensor cuda_t5_gated_act(const Tensor& gate, const Tensor& lin, kern::T5Act act);

// table [num_buckets, H] f32|bf16 on the device, buckets i64 [Lq + Lk − 1] on the device (from
// t5_relative_buckets of ops/t5_ops.h) → bias f32 [H, Lq + Lk − 1] on the device.
Tensor cuda_t5_relative_bias(const Tensor& table, const Tensor& buckets);

// q [Lq, H·D], k/v [Lk, H·D] (f32 or bf16, one dtype), rel_bias f32 [H, Lq+Lk−1] or undefined
// → out [Lq, H·D] of q's dtype; keys ≥ num_valid masked. The _out form writes into a preallocated
// device tensor of that shape and dtype (e.g. a row range of a larger buffer).
Tensor cuda_t5_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias, int64_t num_heads,
                         int64_t num_valid);
void cuda_t5_attention_out(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& rel_bias,
                           int64_t num_heads, int64_t num_valid, Tensor& out);

// table [vocab, D] f32|bf16 on the device, ids i64 [rows] on the device (each in [0, vocab), checked
// by the caller) → [rows, D] of table's dtype.
Tensor cuda_embedding(const Tensor& table, const Tensor& ids);

}  // namespace vgen
