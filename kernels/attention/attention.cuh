// CUDA attention launchers with the contract of attention_ref.h:
//   q [B,Sq,H,D], k/v [B,Skv,H,D], out [B,Sq,H,D] (row-major), lse [B,H,Sq] fp32 natural-log
//   log-sum-exp of the scaled scores (may be null). Keys j >= num_valid_kv get zero weight (they are
//   never loaded, so pad rows may hold anything); with no valid key a row is 0 and its lse -inf.
// Head dims up to kAttnMaxHeadDim; any D works (smaller or odd D is padded in shared memory).
// Token strides may be given for strided views (e.g. q inside a fused [B,S,3,H,D] QKV buffer).
// Launches on `stream` and returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

constexpr int64_t kAttnMaxHeadDim = 128;

struct AttnArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;  // [B, H, Sq] or null
  int64_t B = 0, Sq = 0, Skv = 0, H = 0, D = 0;
  int64_t num_valid_kv = 0;  // clamped to [0, Skv]
  float scale = 1.0f;
  // Elements between consecutive tokens of one batch entry (0 = H*D, dense); the batch stride is
  // S times the token stride, the head stride is D.
  int64_t q_stride = 0, k_stride = 0, v_stride = 0, o_stride = 0;
};

// The token strides of q, k, v and out with 0 resolved to the dense H·D.
struct AttnStrides {
  int64_t q, k, v, o;
};
inline AttnStrides attn_strides(const AttnArgs& a) {
  const int64_t dense = a.H * a.D;
  return {a.q_stride ? a.q_stride : dense, a.k_stride ? a.k_stride : dense, a.v_stride ? a.v_stride : dense,
          a.o_stride ? a.o_stride : dense};
}

enum class AttnOut : uint8_t { kBF16, kF32 };

// bf16 q/k/v, fp32 accumulation and softmax statistics on tensor cores (flash attention, online
// softmax); out is bf16 or fp32 (fp32 keeps partial results of Ring/Attention2D unrounded).
cudaError_t attention_fwd_bf16(const AttnArgs& args, AttnOut out_type, cudaStream_t stream);

// The same on Hopper (sm_90a: TMA, wgmma, warp-specialised) for D = 128, bf16 out:
// cudaErrorNotSupported, with nothing launched, outside attention_wgmma_supports (another GPU,
// another D, token strides not multiples of 8 elements, q/k/v not 16-byte aligned, no valid key,
// scale not positive and finite).
bool attention_wgmma_available();  // the current device runs the kernel at all (sm_90a code, sm_90)
bool attention_wgmma_supports(const AttnArgs& args);
cudaError_t attention_fwd_wgmma_bf16(const AttnArgs& args, cudaStream_t stream);
uint64_t attention_wgmma_calls();  // launches so far (process-wide), for tests of the dispatch

// fp32 q/k/v/out on CUDA cores, for precision fp32 (slower; accurate exp/log).
cudaError_t attention_fwd_f32(const AttnArgs& args, cudaStream_t stream);

// attention_merge_ref on the device: merges (o2, lse2) into (o1, lse1) in place, fp32 math.
// o1 fp32 [B,S,H,D]; o2 fp32 or bf16 (o2_bf16) [B,S,H,D]; lse [B,H,S].
cudaError_t attention_merge(float* o1, float* lse1, const void* o2, bool o2_bf16, const float* lse2, int64_t B,
                            int64_t S, int64_t H, int64_t D, cudaStream_t stream);

// N-way LSE merge of bf16 partial results over disjoint key ranges (a key-chunked attention):
// out [B,S,H,D] bf16 = Σ_i w_i·parts[i] with w_i = exp(lse_i − lse), lse = log Σ_i exp(lse_i), in
// fp32 and rounded once; lse_out [B,H,S] (may be null). parts[i] bf16 [B,S,H,D], lses[i] [B,H,S].
// Rows with no valid key in any part are 0 (lse −inf). 1 <= n <= kAttnMaxMergeParts. out may be
// one of the parts (in place: each element is read before it is written, by the same thread).
constexpr int kAttnMaxMergeParts = 16;
cudaError_t attention_merge_parts_bf16(const void* const* parts, const float* const* lses, int n, void* out,
                                       float* lse_out, int64_t B, int64_t S, int64_t H, int64_t D,
                                       cudaStream_t stream);

// Folds the attention over a short key range into the result over the other keys, in place (the
// remainder of a 128-aligned key split). On entry args.out [B,Sq,H,D] bf16 holds the normalised
// attention over the other keys and lse_in [B,H,Sq] its LSE (−inf: no key there, and that out row
// is ignored); args.k/args.v hold the range's num_valid_kv keys (1..kAttnTailMaxKeys; batch stride
// Skv tokens, as in every call here). On return args.out holds the attention over both and
// args.lse (may be null or lse_in) its LSE. The same as the range's attention followed by
// attention_merge_parts_bf16, except that the range's partial is neither rounded to bf16 nor
// written: one pass over q and out. cudaErrorNotSupported, with nothing launched, outside
// attention_tail_merge_supports: bf16, 8 <= D <= 128 with D % 8 == 0, token strides multiples of 8
// elements, 16-byte aligned pointers, and the block's shared memory (up to 170 KiB for 128 keys at
// D = 128) within what the current device grants.
constexpr int64_t kAttnTailMaxKeys = 128;
bool attention_tail_merge_supports(const AttnArgs& args);
cudaError_t attention_tail_merge_bf16(const AttnArgs& args, const float* lse_in, cudaStream_t stream);

}  // namespace vgen::kern
