// Attention on one block of keys with its log-sum-exp, and the fp32 LSE merge of partial results:
// the local steps of Ring and Attention2D (and the head-sharded step of Ulysses). Tensor-level
// wrappers over kernels/attention: host f32 tensors run the CPU reference, device tensors the CUDA
// launchers (ops/device_ops.h cuda_attention: bf16 or f32 q/k/v, out f32 or q's dtype).
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "parallel/seq_attention.h"

namespace vgen {

// q [B, Sq, H, D], k/v [B, Skv, KVH, D] -> out [B, Sq, H, D]; lse [B, H, Sq] fp32 (optional).
// KVH divides H (grouped K/V heads: query head h reads K/V head h / (H / KVH)); the host reference
// reads the groups in place, the device repeats the K/V heads to H before its kernels (KVH == H:
// no copy). Keys j >= num_valid_kv get zero weight; with no valid key the row is 0 and lse = -inf.
// Scale 1/sqrt(D). `policy`: the device backend and key split, and whether this is an fp8
// self-attention (the FP8 kernels give the LSE of the true scores, so the Ring and Attention2D
// merges are unchanged).
void block_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_valid_kv, Tensor& out,
                     Tensor* lse, const AttentionPolicy& policy);

// Query heads per K/V head, H / KVH, of q [B, S, H, D] and k [B, S', KVH, D]; kModel naming `who` when
// KVH does not divide H.
int64_t kv_head_groups(const Tensor& q, const Tensor& k, const char* who);

// Merges (o2, lse2) into (out, lse) in place, fp32: lse = log(e^lse + e^lse2),
// out = (e^lse·out + e^lse2·o2) / e^lse_new. out/o2 [B, S, H, D], lse/lse2 [B, H, S].
void block_attention_merge(Tensor& out, Tensor& lse, const Tensor& o2, const Tensor& lse2);

}  // namespace vgen
