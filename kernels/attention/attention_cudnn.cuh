// Attention forward through cuDNN's fused SDPA (cudnn-frontend graph API), with the contract of
// attention_ref.h / attention.cuh for bf16 inputs and a bf16 output:
//   q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D] (row-major, token strides as in AttnArgs),
//   lse [B,H,Sq] fp32 natural-log log-sum-exp of the scaled scores (may be null).
// Keys j >= num_valid_kv are excluded exactly: by default the K/V operands are described to cuDNN
// as their first num_valid_kv tokens only (CudnnKvMask::kSlice; pad rows are never read), or through
// cuDNN's padding mask with per-batch SEQ_LEN_Q / SEQ_LEN_KV tensors (kPaddingMask; the pad rows are
// read and must be finite: NaN there turns the output rows into NaN, seen with cuDNN 9.14).
//
// Only some arguments run on cuDNN (attention_cudnn_supports); anything else returns
// cudaErrorNotSupported without touching the device, and the caller uses attention_fwd_bf16.
// Built graphs are cached per (device, shape, strides, scale, LSE, mask); one cuDNN handle per
// device, one workspace per (device, stream). Thread-safe; never throws. In a build without cuDNN
// (VGEN_WITH_CUDNN undefined) every call returns cudaErrorNotSupported. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/attention/attention.cuh"

namespace vgen::kern {

enum class CudnnKvMask : uint8_t {
  kSlice,        // K/V described with Skv = num_valid_kv (one graph per distinct count)
  kPaddingMask,  // full Skv with padding mask and SEQ_LEN tensors (one graph per shape); finite pads only
};

// cudnnGetVersion() of the loaded library (e.g. 91400), 0 without the cuDNN backend.
int64_t attention_cudnn_version();

// True when this build has the cuDNN backend (cuDNN and the cudnn-frontend headers were found).
bool attention_cudnn_built();

// True when the backend is built and cuDNN initialises on the current device (library loads,
// handle created). Otherwise false with the reason in *why (if given).
bool attention_cudnn_available(std::string* why = nullptr);

// Whether `args` are in the cuDNN support surface, checked on the host only: bf16 out, D a
// multiple of 8 in [8, 128], B/Sq/H >= 1, 1 <= num_valid_kv (clamped to Skv), token strides
// multiples of 8 elements and 16-byte aligned pointers. Otherwise false with the reason in *why.
// cuDNN may still reject a graph (then attention_fwd_cudnn returns cudaErrorNotSupported).
bool attention_cudnn_supports(const AttnArgs& args, AttnOut out_type, std::string* why = nullptr);

// SDPA forward on `stream`. cudaSuccess when launched; cudaErrorNotSupported when these arguments
// (or this build/device) are not served by cuDNN and nothing was launched; another error when
// cuDNN failed. attention_cudnn_last_error() says why.
cudaError_t attention_fwd_cudnn(const AttnArgs& args, AttnOut out_type, cudaStream_t stream,
                                CudnnKvMask mask = CudnnKvMask::kSlice);

// Human-readable detail of the last non-success on this thread ("" after a success).
const char* attention_cudnn_last_error();

struct CudnnAttnStats {
  uint64_t calls = 0;             // attention_fwd_cudnn calls that launched
  uint64_t graphs_built = 0;      // graphs built and cached
  uint64_t graphs_rejected = 0;   // keys cuDNN could not serve (remembered, not retried)
  uint64_t workspace_bytes = 0;   // sum of the cached workspaces
};
CudnnAttnStats attention_cudnn_stats();

}  // namespace vgen::kern
