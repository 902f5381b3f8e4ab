// FP8 (e4m3) self-attention with the contract of attention.cuh (bf16 q/k/v [B,S,H,D] with token
// strides, bf16 out, optional fp32 lse [B,H,Sq] of the true scores, keys >= num_valid_kv excluded)
// and the numerics of attention_fp8_ref.h: K smoothed by its mean over the valid keys, Q and K in
// e4m3 (default) or INT8 (`qk`) with one scale per 128-token block and head, V in e4m3 with one
// scale per channel and head, P in e4m3 (p·448), fp32 accumulators and softmax statistics.
// Two steps on `stream`: a quantisation pass writes Q, K (e4m3 or INT8) and Vᵀ (e4m3) and their
// scales into the caller's workspace (attention_fp8_workspace_bytes), then the attention kernel
// reads them:
//   D = 128 on Hopper (sm_90a): TMA + wgmma, e4m3 or s8 (attention_fp8_wgmma_supports);
//   any other D up to 128 (tests, tiny models): a CUDA-core kernel with the same quantisation.
// Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.cuh"
#include "kernels/attention/attention_fp8_ref.h"

namespace vgen::kern {

// Bytes of workspace one call with these sizes needs (256-byte aligned pieces).
size_t attention_fp8_workspace_bytes(const AttnArgs& args);

// Whether the current device has FP8 tensor cores this project drives (sm_90 with sm_90a code).
bool attention_fp8_available();
// The wgmma kernel serves the call (D = 128, token strides multiples of 8, 16-byte aligned q/k/v).
bool attention_fp8_wgmma_supports(const AttnArgs& args);

// bf16 q/k/v in, bf16 out. cudaErrorInvalidValue for D > 128, a missing or too small workspace,
// or non-bf16 buffers (the caller passes bf16); cudaErrorNotSupported off sm_90.
cudaError_t attention_fwd_fp8(const AttnArgs& args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                              Fp8Qk qk = Fp8Qk::kE4m3);

// The first step alone (benchmarks): the quantisation pass into the workspace.
cudaError_t attention_fp8_quantize(const AttnArgs& args, void* workspace, size_t workspace_bytes, cudaStream_t stream,
                                   Fp8Qk qk = Fp8Qk::kE4m3);

uint64_t attention_fp8_wgmma_calls();  // launches of the wgmma kernel so far (tests of the dispatch)

}  // namespace vgen::kern
