// Tensor-level wrappers of the CUDA launchers (kernels/gemm/gemm.cuh, kernels/attention/attention.cuh,
// kernels/common/convert.cuh) for device tensors. Everything is queued on compute_stream()
// (core/cuda_stream.h); shapes, dtypes and devices are checked and named in errors. In a CPU-only
// build the cuda_* functions throw kUsage; cast() works on host tensors in both builds.
#pragma once
#include "core/tensor.h"

namespace vgen {

// Dtype conversion among f32 / bf16 / f16 on the device → a new device tensor (the same tensor
// when it already has `dt`). Round to nearest even, like Tensor::to on the host.
Tensor cuda_cast(const Tensor& t, DType dt);
// Any device: host tensors through Tensor::to(dt), device tensors through cuda_cast.
Tensor cast(const Tensor& t, DType dt);

enum class Activation { kNone, kGeluTanh };

// y = act(x · wᵀ + b) with fp32 accumulation; x [..., K], w [N, K], b [N] or undefined → [..., N].
// bf16 x/w: b bf16 or f32, out bf16 or f32. f32 x/w (precision fp32, no TF32): b and out f32.
Tensor cuda_linear(const Tensor& x, const Tensor& w, const Tensor& b, DType out_dt,
                   Activation act = Activation::kNone);
inline Tensor cuda_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  return cuda_linear(x, w, b, x.dtype());
}
// y += alpha · x · wᵀ + b in place, inside the GEMM's epilogue (one rounding of the fp32 sum into y's
// dtype): a residual update without a pass of its own. y [..., N], f32 or bf16 (as cuda_linear's out).
void cuda_linear_add_(Tensor& y, const Tensor& x, const Tensor& w, const Tensor& b, float alpha = 1.0f);

// attention_ref on the device. q [B,Sq,H,D], k/v [B,Skv,H,D] (all bf16 or all f32), out
// [B,Sq,H,D] preallocated (bf16 or f32 for bf16 inputs, f32 for f32 inputs), lse [B,H,Sq] f32 or
// null. D <= 128. Keys >= num_valid_kv get zero weight.
void cuda_attention(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                    int64_t num_valid_kv, float scale);

// attention_merge_ref on the device: (o1 f32, lse1) <- merge with (o2 f32 or bf16, lse2).
// o [B,S,H,D], lse [B,H,S] f32.
void cuda_attention_merge(Tensor& o1, Tensor& lse1, const Tensor& o2, const Tensor& lse2);

}  // namespace vgen
