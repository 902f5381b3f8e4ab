// FP8 self-attention through cuDNN's FP8 SDPA (cudnn-frontend sdpa_fp8, per-tensor scaling), with
// the contract of attention.cuh for bf16 q/k/v [B,S,H,D] (token strides), a bf16 out and an
// optional fp32 lse [B,H,Sq] of the scores the graph computes; keys j >= num_valid_kv excluded.
// The numerics are attention_cudnn_fp8_ref.h's. Three steps on `stream`:
//   1. quantisation (attention_cudnn_fp8_quant.cu): K's mean over the valid keys per head and
//      channel taken out (softmax is invariant to it), the amax of Q, of K − mean and of V over
//      their valid tokens, then each stored densely in e4m3 with one scale per tensor (448 / amax)
//      into the caller's workspace, the descales (amax / 448) beside them;
//   2. the cuDNN graph (attention_cudnn_fp8.cpp): S = Q8·K8ᵀ · scale · dq · dk, softmax in fp32,
//      P in e4m3 at scale 448 (scale_s), O = P8·V8 · (1/448) · dv, written in bf16 where cuDNN
//      has that output (compute capability 10.x / 12.x with cuDNN 9.13+) or in e4m3 scaled by
//      scale_o = 224 / amax(V) (|O| <= amax(V): a convex combination of V's rows, 2x headroom);
//   3. an e4m3 O read back into the bf16 out (· 1 / scale_o), or a bf16 O of a padded head dim
//      copied into it; the LSE given back the mean's share, scale · q·mean.
// cuDNN has an FP8 SDPA on compute capability 9.0 and newer only; every D up to 128 runs as 64 or
// 128 (padded with zeros: the head dims its FP8 kernels serve on every version).
// Built graphs are cached per (device, shape, output type, LSE, scale); the cuDNN handle and
// per-stream workspace are this file's own. Thread-safe; never throws; never includes lib/.
// Without cuDNN in the build every call returns cudaErrorNotSupported.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_cudnn_fp8_ref.h"

namespace vgen::kern {

// How cuDNN writes O: bf16 directly, or e4m3 read back by the third step.
enum class CudnnFp8Out : uint8_t { kBF16, kE4m3 };

// Whether cuDNN's FP8 SDPA runs on the current device: the library (9.1 or newer, not 9.10.0),
// compute capability 9.0 or newer, and a probe graph (B 1, 128 queries and keys, 1 head, D 128)
// that cuDNN validates and builds a plan for (cached per device). Otherwise false with *why.
bool attention_cudnn_fp8_available(std::string* why = nullptr);

// The output the current device's cuDNN offers (bf16 on 10.x / 12.x with cuDNN >= 9.13, else e4m3).
CudnnFp8Out attention_cudnn_fp8_out_type();

// The quantised operands in the workspace (step 1's result; tests read them back).
struct CudnnFp8Buffers {
  uint8_t* q8 = nullptr;  // [B, Sq, H, Dp] e4m3, dense (Dp: attention_cudnn_fp8_head_dim)
  uint8_t* k8 = nullptr;  // [B, nv, H, Dp] e4m3, dense (nv = num_valid_kv clamped to [0, Skv])
  uint8_t* v8 = nullptr;  // [B, nv, H, Dp] e4m3, dense
  void* o = nullptr;      // [B, Sq, H, Dp] e4m3 or bf16, dense: cuDNN's O when not written into out
  float* km = nullptr;    // [B, H, D] K's mean over the valid keys
  float* ksum = nullptr;  // [B, H, chunks, D] its partial sums (kCudnnFp8KeyChunk keys each)
  float* scalars = nullptr;  // kCudnnFp8Scalars floats (CudnnFp8Scalar order)
};
// The scalars of one call, on the device, in this order.
enum CudnnFp8Scalar : int {
  kAmaxQ, kAmaxK, kAmaxV,             // max |x| over the valid tokens (step 1)
  kDescaleQ, kDescaleK, kDescaleV,    // amax / 448 (fp8_dequant_mul)
  kScaleQ, kScaleK, kScaleV,          // 448 / amax (fp8_quant_mul)
  kDescaleS, kScaleO, kDescaleO,      // 1/448; 224 / amax(V) and its inverse
  kAmaxS, kAmaxO,                     // cuDNN's outputs (unused: the scales are per call)
  kOne,                               // 1: scale_o of a bf16 O
  kCudnnFp8Scalars
};

// The head dim cuDNN sees: 64 or 128 (zeros in the padding change neither Q·Kᵀ nor the first D
// columns of O; the tiny test models have D = 12, Wan's DiTs 128).
inline int64_t attention_cudnn_fp8_head_dim(int64_t D) { return D <= 64 ? 64 : 128; }

// Bytes of workspace one call needs (256-byte aligned pieces) and their places in it.
size_t attention_cudnn_fp8_workspace_bytes(const AttnArgs& args);
CudnnFp8Buffers attention_cudnn_fp8_buffers(const AttnArgs& args, void* workspace);

// Whether the call is in cuDNN FP8's surface (host checks only: D in [1, 128],
// B/Sq/H >= 1, token strides multiples of 8 elements, 16-byte aligned pointers); *why otherwise.
bool attention_cudnn_fp8_supports(const AttnArgs& args, std::string* why = nullptr);

// Step 1 alone (tests, benchmarks): the amaxes, scales and e4m3 operands into the workspace.
cudaError_t attention_cudnn_fp8_quantize(const AttnArgs& args, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream);
// K's mean alone (tests): km and ksum of the workspace (part of step 1).
cudaError_t attention_cudnn_fp8_key_mean(const AttnArgs& args, const CudnnFp8Buffers& buf, cudaStream_t stream);
// The LSE cuDNN wrote for K − mean made the true scores' (+ scale · q·mean; part of step 3).
cudaError_t attention_cudnn_fp8_lse_fix(const AttnArgs& args, const CudnnFp8Buffers& buf, cudaStream_t stream);
// Step 3 alone: cuDNN's O in the workspace (e4m3 · descale_o, or bf16) into the bf16 out (its
// first D columns; token stride o_stride).
cudaError_t attention_cudnn_fp8_finish(const AttnArgs& args, const CudnnFp8Buffers& buf, bool e4m3,
                                       cudaStream_t stream);
// No valid key: out rows 0, lse −inf (cuDNN needs one key at least).
cudaError_t attention_cudnn_fp8_empty(const AttnArgs& args, cudaStream_t stream);

// All three steps. cudaErrorNotSupported when the call, build or device is not served (nothing
// launched), cudaErrorInvalidValue for a missing or small workspace, another error when cuDNN or a
// kernel failed; the reason in attention_cudnn_fp8_last_error(). No valid key: only the empty
// kernel runs (on a device before 9.0 too).
cudaError_t attention_fwd_cudnn_fp8(const AttnArgs& args, void* workspace, size_t workspace_bytes,
                                    cudaStream_t stream);

const char* attention_cudnn_fp8_last_error();  // "" after a success on this thread

struct CudnnFp8Stats {
  uint64_t calls = 0, graphs_built = 0, graphs_rejected = 0, e4m3_out = 0;
};
CudnnFp8Stats attention_cudnn_fp8_stats();

}  // namespace vgen::kern
