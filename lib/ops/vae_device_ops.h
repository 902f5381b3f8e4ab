// Tensor-level device ops of the Wan VAE decoder (kernels/{conv3d,vae_norm,vae_ops,vae_attn}/*.cuh),
// the device side of ops/vae_ops.h. Activations are channels-last — [T, H, W, C] per batch item, C
// contiguous — in f32 or bf16; norm gammas and conv biases are f32. Everything is queued on
// compute_stream(); shapes, dtypes and devices are checked and named in errors. In a CPU-only build
// every function throws kUsage.
#pragma once
#include <cstddef>

#include "core/tensor.h"
#include "kernels/conv3d/conv3d_ref.h"

namespace vgen {

// How the device VAE's convolutions run, passed with every conv (WanVaeOptions::conv → VaeRun →
// vae_causal_conv / vae_strided_conv → the device conv): a run keeps the defaults; tests and
// benchmarks force a backend or autotuning.
enum class VaeConvBackend { kAuto, kCudnn, kGemm };
struct VaeConvPolicy {
  // kAuto: cuDNN when built and it accepts the shape, else the per-tap GEMM fallback.
  VaeConvBackend backend = VaeConvBackend::kAuto;
  // cuDNN: the first call of each new shape times the first few plans (a device synchronisation
  // each) and keeps the fastest; false runs the heuristics' first plan (kern::Conv3dArgs::autotune).
  bool autotune = false;
};
// Calls served by each conv backend since start (tests check which path ran).
struct VaeConvCounts {
  uint64_t cudnn = 0, gemm = 0, cudnn_rejected_shapes = 0, cudnn_unfused_bias = 0, cudnn_unfused_residual = 0;
};
VaeConvCounts vae_conv_counts();

// Stride-1 conv, channels-last: x [Ti, Hi, Wi, Cin] (or [N, Ti, Hi, Wi, Cin]), w [Cout, kt, kh, kw, Cin]
// of x's dtype, b [Cout] f32 or undefined, spatial zero padding `pad` → y [(N,) To, Ho, Wo, Cout],
// on the backend `policy` asks for; plus `residual` (y's shape and dtype) where given, in the conv's
// epilogue where the backend fuses it (kern::Conv3dArgs::residual).
Tensor cuda_vae_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const kern::Conv3dPad& pad,
                       const VaeConvPolicy& policy, const Tensor* residual = nullptr);

// y = norm(x) over the last dim (channel RMS norm, gamma f32 [C]) then SiLU if asked; y
// preallocated with x's shape (its dtype may differ; y may be a view, e.g. frames of a buffer).
void cuda_vae_rms_norm(const Tensor& x, const Tensor& gamma, bool silu, Tensor& y);

// A checkpoint conv weight src f32 [Cout, Cin, taps…] (device) into the channels-last conv layout
// dst [Cout_store, taps…, Cin] (preallocated, f32/bf16/f16), rows past Cout zero.
void cuda_vae_conv_weight_layout(const Tensor& src, Tensor& dst);

// time_conv interleave: x [T, H, W, 2C] → [2T, H, W, C], frame 2t+k = channels [k·C, (k+1)·C) of frame t.
Tensor cuda_vae_time_interleave2(const Tensor& x);

void cuda_vae_add_(Tensor& y, const Tensor& x);  // y += x (same dtype and numel)
void cuda_vae_clamp_(Tensor& t, float lo, float hi);

// Decoder output: x [T, H, W, Cx] → video [C, F, H, W] f32 frames [f0, f0 + T) = clamp(x[..., :C]).
void cuda_vae_write_frames(const Tensor& x, int64_t C, float lo, float hi, Tensor& video, int64_t f0);

// Single-head attention of one frame: qkv [S, 3C] supplies the queries (columns [0, C)), kv
// [Sf, 3C] the keys ([C, 2C)) and values ([2C, 3C)) → [S, C] in qkv's dtype, scale 1/√C.
Tensor cuda_vae_frame_attention(const Tensor& qkv, const Tensor& kv, int64_t C);

// Strided 2-D copy of `height` rows of `width` bytes between device buffers (cudaMemcpy2DAsync).
void cuda_copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height);
// Zeroes `height` rows of `width` bytes at pitch `pitch` (cudaMemset2DAsync).
void cuda_zero_2d(void* dst, size_t pitch, size_t width, size_t height);

}  // namespace vgen
