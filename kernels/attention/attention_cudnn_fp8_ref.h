// CPU reference of the cuDNN FP8 attention (attention_cudnn_fp8.cuh): the quantisation exactly as
// its kernels do it and the graph it hands cuDNN, in fp32 (kernels/quant/fp8_e4m3_ref.h), same
// layout and contract as attention_ref: q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D], lse [B,H,Sq]
// (may be null); keys j >= nv (nv = num_valid_kv clamped to [0, Skv]) get zero weight; with nv = 0
// a row is 0, lse −inf.
//   per tensor: a = max |x| over Q, over K's first nv keys, over V's (every batch entry and head);
//     x8 = e4m3(x · 448/a), dequantised by a/448 (fp8_quant_mul / fp8_dequant_mul: dq, dk, dv)
//   s[i,j] = (Σ_d q8·k8) · scale · dq · dk                         (fp32)
//   P = softmax_j(s) in fp32 over the whole row; P8 = e4m3(P · 448)  (scale_s; descale_s 1/448)
//   o[i,d] = (Σ_j P8·v8[j,d]) · (1/448) · dv
//   e4m3 output (Hopper): o = e4m3(o · so) / so with so = 224/a_v (fp8_quant_mul(a_v) / 2);
//     bf16 output (Blackwell): o as it is
//   lse[i] = max_j s + log Σ_j exp(s − max)
// cuDNN's fused kernel runs the softmax online over key tiles, so it rounds exp(s − running max)
// · 448 rather than P · 448: the same e4m3 rounding of each probability up to one step, which the
// GPU test's tolerance allows for. This function is also the CPU emulation of precision fp8's
// self-attention under attention_config.backend cudnn (as the H100 runs it: e4m3 output).
#pragma once
#include <cstdint>

namespace vgen::kern {

// The tensor's e4m3 copy as the quantisation kernel writes it: x [B, S, HD] (first n tokens of each
// batch entry used) → x8 [B, n, HD] bytes; returns the amax.
float cudnn_fp8_quantize_ref(const float* x, int64_t B, int64_t S, int64_t n, int64_t HD, uint8_t* x8);

void attention_cudnn_fp8_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                             int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale,
                             bool e4m3_out = true);

}  // namespace vgen::kern
