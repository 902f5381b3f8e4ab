// One Wan transformer block (wan_spec.md §1.4.4–5) on a sequence shard, written once for the host
// (fp32, the oracle) and the device (bf16 or fp32, CUDA); the ops it calls dispatch by device:
//   mod = table + tproj;  x += SelfAttn(AdaLN(x; shift1, scale1)) · gate1
//   x += CrossAttn(LN_affine(x), text);  x += FFN(AdaLN(x; shift2, scale2)) · gate2
// What the device fuses (WanBlockFusion) changes where the residual adds and the GELU run; the host
// runs with no fusion, in the order above. precision fp8 (the block's switches in WanBlockPolicy):
// the self-attention and the block linears as the fp8 kernels quantise (the host: their CPU
// emulation, then fp32 math); norms, modulation, RoPE and the cross-attention in the compute dtype.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "model/phase_profiler.h"
#include "model/wan/dit/block_policy.h"
#include "model/wan/dit/time_modulation.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_weights.h"
#include "parallel/seq_attention.h"

namespace vgen {

// The fusions of a device model (WanDeviceOptions); the host's default runs none.
struct WanBlockFusion {
  DType dtype = DType::kF32;         // compute dtype of the activations
  bool fused_gelu = false;           // the FFN's GELU in ffn1's GEMM epilogue
  bool fused_residual_norm = false;  // each residual add in the pass of the norm that reads x next
  bool fused_residual_gemm = false;  // residual adds (gates folded) in the GEMM epilogues
  bool same_gates = false;           // every sample has the same modulation (one timestep [B])
};

// How a forward runs its blocks: the config, the fusions and the phase profiler (null: none).
struct WanBlockRun {
  const WanTransformerConfig& cfg;
  WanBlockFusion fusion{};
  DitPhaseProfiler* profiler = nullptr;
};

// A block's gated feed-forward residual x += out · mod[.., 5] not yet added: the next block adds it
// in its first norm's pass. Undefined when ffn2's epilogue already added it.
struct WanPendingResidual {
  Tensor out;  // [B, S, D]
  Tensor mod;  // [B, 6, D] or [B, S, 6, D] f32, the modulation of the block that made `out`
  // Adds it now (before x is read whole: the first-block cache, the head) and clears it.
  void flush(Tensor& x, DitPhaseProfiler* profiler);
};

// One block's cross-attention keys and values: the text's [B, L, H, Dh], and the image tokens'
// [B, L_img, H, Dh] on the image path (undefined otherwise; their attention adds to the text's).
struct WanCrossKv {
  Tensor k, v;
  Tensor image_k, image_v;
};

// x [B, S_loc, D] in place; `time` the forward's time_proj output (per sample or per token, before
// the block's table is added); cos/sin [S_loc, Dh] f32. `pending` carries the FFN residual from the
// previous block and on to the next.
void wan_block_forward(const WanBlockRun& run, const WanBlockWeights& w, Tensor& x, WanPendingResidual& pending,
                       const WanTimeEmbedding& time, const Tensor& cos, const Tensor& sin, const WanCrossKv& kv,
                       const SeqLayout& layout, SeqAttention& attention, const WanBlockPolicy& policy);

// Whether a gate folds into a copy of a [N, K] weight for `rows` rows of input with `copies`
// distinct gates: the copy reads and writes w per gate, the epilogue saves about two passes over
// [rows, N] (the update's write and read and x's write, less the read of C), so only when rows > K
// per copy. fp8 GEMMs fold it into the [N] scale and bias instead, so always.
inline bool folds_gate(int64_t rows, int64_t K, int64_t copies) { return rows > K * copies; }

}  // namespace vgen
