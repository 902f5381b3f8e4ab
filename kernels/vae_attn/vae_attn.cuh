// Single-head attention over the tokens of one frame, for the Wan VAE mid block (wan_spec §5.2):
// head dim D = the block's channels (384 for Wan 2.1, above the flash kernels' 128). Contract of
// attention_ref (kernels/attention/attention_ref.h) with B = H = 1, every key valid, no LSE:
//   out[i, :] = Σ_j softmax_j(scale · q_i·k_j) · v_j
// q [Sq, D] with row stride ldq, k [Skv, D] / v [Skv, D] with ldk / ldv, out [Sq, D] with ldo (in
// elements, so q/k/v can be column ranges of one fused [S, 3D] qkv buffer). All of one type:
// bf16 (scores and softmax in fp32, P rounded to bf16 for the PV product as flash attention does,
// fp32 accumulation, one rounding of out) or f32 (fp32 throughout, no TF32).
// Queries run in blocks of `block_rows` (0: all): S = scale·Q·Kᵀ through cuBLAS into an fp32
// buffer, a row softmax kernel, O = P·V through cuBLAS. The workspace holds one block's scores
// (and P for bf16). Queued on `stream`. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

struct VaeAttnArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;  // must not overlap q, k or v
  int64_t ldq = 0, ldk = 0, ldv = 0, ldo = 0;  // 0 = dense (D)
  int64_t Sq = 0, Skv = 0, D = 0;
  float scale = 1.0f;
  FloatType type = FloatType::kBF16;
  int64_t block_rows = 0;
};

// Workspace bytes for `a` (depends on the sizes, block_rows and type only).
size_t vae_attention_workspace(const VaeAttnArgs& a);

cudaError_t vae_attention(const VaeAttnArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream);

// Detail of the last failure on this thread.
const char* vae_attention_last_error();

// Row softmax (exposed for tests): p[r, :] = softmax(s[r, :]) for rows of n fp32 scores, written
// as `p_type` (p may equal s for f32).
cudaError_t vae_softmax_rows(const float* s, void* p, FloatType p_type, int64_t rows, int64_t n, cudaStream_t stream);

}  // namespace vgen::kern
