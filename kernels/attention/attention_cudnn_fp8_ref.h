// CPU reference of the cuDNN FP8 attention (attention_cudnn_fp8.cuh): the quantisation exactly as
// its kernels do it and the graph it hands cuDNN, in fp32 (kernels/quant/fp8_e4m3_ref.h), same
// layout and contract as attention_ref: q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D], lse [B,H,Sq]
// (may be null); keys j >= nv (nv = num_valid_kv clamped to [0, Skv]) get zero weight; with nv = 0
// a row is 0, lse −inf.
//   K smoothed first: km[b,h,d] = mean over the nv valid keys (fp32 sums over chunks of
//     kCudnnFp8KeyChunk keys in order, then the chunks' in order, / nv), K' = K − km (softmax is
//     invariant to it; the common part of K no longer costs e4m3 steps)
//   per tensor: a = max |x| over Q, over K' (valid keys), over V's valid keys (every batch entry and
//     head); x8 = e4m3(x · 448/a), dequantised by a/448 (fp8_quant_mul / fp8_dequant_mul: dq, dk, dv)
//   s[i,j] = (Σ_d q8·k8) · scale · dq · dk                         (fp32)
//   softmax online over tiles of key_tile keys, as a flash kernel runs it: m the running row
//     maximum, p = exp(s − m) in fp32, l = Σ p (fp32, unrounded), P8 = e4m3(p · 448) (scale_s;
//     descale_s 1/448), acc[d] = Σ P8·v8[j,d], l and acc rescaled by exp(m_old − m) as m grows
//   o[i,d] = acc[d] / l · (1/448) · dv
//   e4m3 output (Hopper): o = e4m3(o · so) / so with so = 224/a_v (fp8_quant_mul(a_v) / 2);
//     bf16 output (Blackwell): o as it is
//   lse[i] = m + log l + scale · Σ_d q[i,d]·km[d]   (the true scores' LSE: the smoothing undone)
// cuDNN does not document its key tile: the rounding of P differs where the running maximum at a
// key differs from the emulated one (by up to one e4m3 step of that probability), which the GPU
// test's tolerance allows for and whose size it prints for each tile. This function is also the
// CPU emulation of precision fp8's self-attention under attention_config.backend cudnn (as the
// H100 runs it: e4m3 output, 128-key tiles).
#pragma once
#include <cstdint>

namespace vgen::kern {

constexpr int64_t kCudnnFp8KeyChunk = 1024;  // keys per partial sum of K's mean

// K's mean over its first n keys, km [B, H, D], in the kernel's summation order (k [B, S, H, D]).
void cudnn_fp8_key_mean_ref(const float* k, int64_t B, int64_t S, int64_t n, int64_t H, int64_t D, float* km);

// The tensor's e4m3 copy as the quantisation kernel writes it: x [B, S, HD] (first n tokens of each
// batch entry used) → x8 [B, n, HD] bytes; returns the amax.
float cudnn_fp8_quantize_ref(const float* x, int64_t B, int64_t S, int64_t n, int64_t HD, uint8_t* x8);

struct CudnnFp8RefOptions {
  bool e4m3_out = true;    // O stored in e4m3 (Hopper) or bf16 (Blackwell)
  int64_t key_tile = 128;  // keys per online-softmax tile; <= 0: the whole row at once
};

void attention_cudnn_fp8_ref(const float* q, const float* k, const float* v, float* out, float* lse, int64_t B,
                             int64_t Sq, int64_t Skv, int64_t H, int64_t D, int64_t num_valid_kv, float scale,
                             const CudnnFp8RefOptions& opt = {});

}  // namespace vgen::kern
