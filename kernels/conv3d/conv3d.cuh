// CUDA 3-D convolution of the Wan VAE (stride 1 unless asked): the math of conv3d_ref.h in the device decoder's
// channels-last layout,
//   y[n, to, ho, wo, co] = bias[co] + Σ_{dt,dh,dw,ci} w[co, dt, dh, dw, ci] · x[n, to+dt, ho+dh−top, wo+dw−left, ci]
// with x [N, Ti, Hi, Wi, Cin] (NDHWC), w [Cout, kt, kh, kw, Cin] (KTRSC), bias [Cout] fp32 or null,
// y [N, To, Ho, Wo, Cout], To = Ti − kt + 1, Ho = Hi + top + bottom − kh + 1, Wo = Wi + left + right − kw + 1.
// With strides (the encoder's downsamplers) output frame to reads input frame stride_t·to + dt and
// pixel (ho, wo) reads (stride_s·ho + dh − top, stride_s·wo + dw − left): To = (Ti − kt) / stride_t + 1,
// Ho = (Hi + top + bottom − kh) / stride_s + 1, Wo likewise (floor).
// Spatial zero padding only; a causal conv's cached frames are the leading frames of x (the caller
// lays [cache, chunk] out contiguously). kt = 1 is the per-frame 2-D conv (resample.1).
// x, w and y share one type: bf16 (fp32 accumulation, one rounding of conv + bias) or f32 (fp32
// throughout, no TF32: the validation precision).
//
// Backends: cuDNN (cudnn-frontend graph: conv_fprop with the bias add fused when cuDNN offers it,
// NDHWC / NHWC operands; plans cached per shape) when built with VGEN_WITH_CUDNN, and a per-tap GEMM
// fallback (cuBLAS, fp32 accumulation in the workspace) that serves every shape. kAuto takes cuDNN
// when it accepts the shape, else the fallback. Thread-safe. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/convert.cuh"
#include "kernels/conv3d/conv3d_ref.h"

namespace vgen::kern {

struct Conv3dArgs {
  const void* x = nullptr;      // [N, Ti, Hi, Wi, Cin]
  const void* w = nullptr;      // [Cout, kt, kh, kw, Cin]
  const float* bias = nullptr;  // [Cout] or null
  void* y = nullptr;            // [N, To, Ho, Wo, Cout]; must not overlap x
  // [N, To, Ho, Wo, Cout] of the io type or null: added to conv + bias (a residual connection); in
  // cuDNN's epilogue where it offers it (one rounding), else by conv3d_add_residual (two). Must not
  // overlap y.
  const void* residual = nullptr;
  FloatType type = FloatType::kBF16;  // of x, w, y (f32 or bf16)
  // cuDNN: false runs the heuristics' first plan; true times the first few plans of each new shape
  // on its first call (a device synchronisation each) and keeps the fastest.
  bool autotune = false;
  int64_t N = 1, Cin = 0, Ti = 0, Hi = 0, Wi = 0, Cout = 0, kt = 1, kh = 1, kw = 1;
  Conv3dPad pad;
  int64_t stride_t = 1, stride_s = 1;  // frames; both spatial dims
  int64_t To() const { return (Ti - kt) / stride_t + 1; }
  int64_t Ho() const { return (Hi + pad.top + pad.bottom - kh) / stride_s + 1; }
  int64_t Wo() const { return (Wi + pad.left + pad.right - kw) / stride_s + 1; }
};

enum class ConvBackend : uint8_t { kAuto, kCudnn, kGemm };
const char* conv_backend_name(ConvBackend b);

// Chooses the backend for these shapes and type (pointers are not read) and the workspace it
// needs in bytes. kAuto resolves to kCudnn or kGemm; kCudnn returns cudaErrorNotSupported when
// cuDNN is not built or rejects the shape (conv3d_last_error() says why). Builds and caches the
// cuDNN plan on first use (the current device).
cudaError_t conv3d_prepare(const Conv3dArgs& a, ConvBackend requested, ConvBackend* chosen, size_t* workspace_bytes);

// Queues the conv on `stream` with a backend returned by conv3d_prepare for the same shapes and a
// workspace of at least the size it returned (16-byte aligned pointers for the cuDNN path).
cudaError_t conv3d_forward(const Conv3dArgs& a, ConvBackend chosen, void* workspace, size_t workspace_bytes,
                           cudaStream_t stream);

// Detail of the last failure (or of the cuDNN rejection that sent kAuto to the fallback) on this
// thread.
const char* conv3d_last_error();

// True when this build has the cuDNN path.
bool conv3d_cudnn_built();

struct Conv3dStats {
  uint64_t cudnn_calls = 0, gemm_calls = 0;
  uint64_t cudnn_plans = 0;      // shapes with a built cuDNN plan
  uint64_t cudnn_rejected = 0;   // shapes cuDNN could not serve
  uint64_t cudnn_unfused_bias = 0;  // plans that add the bias in a separate kernel (fp32 or, last resort,
                                    // bf16 conv output: one extra rounding)
  uint64_t cudnn_unfused_residual = 0;  // plans with a residual added by conv3d_add_residual
};
Conv3dStats conv3d_stats();

// y[i] = round(y[i] + residual[i]) for i < n (the residual of a conv whose plan does not fuse it).
cudaError_t conv3d_add_residual(void* y, const void* residual, FloatType type, int64_t n, cudaStream_t stream);

// --- Backend entry points (conv3d_cudnn.cpp, conv3d.cu); use conv3d_prepare / conv3d_forward. ---
cudaError_t conv3d_cudnn_prepare(const Conv3dArgs& a, size_t* workspace_bytes);
cudaError_t conv3d_cudnn_forward(const Conv3dArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream);
Conv3dStats conv3d_cudnn_plan_stats();  // the plan counters (cudnn_plans, cudnn_rejected, cudnn_unfused_bias)
void conv3d_set_error(const char* msg);
// y[i·Cout + c] = round(src[i·Cout + c] + bias[c]) for i < rows (the unfused bias of the cuDNN path);
// src of src_type (f32 or y's type) may equal y.
cudaError_t conv3d_bias_convert(const void* src, FloatType src_type, const float* bias, void* y, FloatType type,
                                int64_t rows, int64_t Cout, cudaStream_t stream);

}  // namespace vgen::kern
