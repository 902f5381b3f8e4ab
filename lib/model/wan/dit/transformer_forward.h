// The Wan DiT's forwards (wan_spec.md §1.4), written once for the host model (fp32 weights, the
// oracle) and the device model (bf16 or fp32 on CUDA): text conditioning, patch embedding,
// condition embedder, the blocks (transformer_block.h), head and unpatchify, through ops that
// dispatch by device. What differs between the two is data: a WanForwardContext.
#pragma once
#include <cstddef>

#include "core/tensor.h"
#include "model/first_block_cache.h"
#include "model/model.h"
#include "model/phase_profiler.h"
#include "model/wan/dit/rope_tables.h"
#include "model/wan/dit/transformer_block.h"
#include "model/wan/dit/transformer_config.h"
#include "model/wan/dit/transformer_weights.h"
#include "parallel/seq_attention.h"

namespace vgen {

struct TextContext;    // model/wan/dit/transformer.h
struct WanFp8Options;  // model/wan/dit/transformer_device.h

// A model's block weights, one block at a time: block_begin(i) before its kernels are queued
// (DWDP: staged into a slot), block_end(i) after (the slot may be refilled).
class WanBlockSource {
 public:
  virtual const WanBlockWeights& block_begin(size_t i) const = 0;
  virtual void block_end(size_t i) const = 0;

 protected:
  ~WanBlockSource() = default;
};

// Where one model's forwards run and what they read.
struct WanForwardContext {
  const WanTransformerConfig& cfg;
  const WanTransformerWeights& w;  // the weights outside the blocks (the blocks through `blocks`)
  const WanBlockSource& blocks;
  const WanRopeRows& rope;
  const WanFp8Options& fp8;
  Device device = Device::kCPU;
  WanBlockFusion fusion{};                 // the device model's (dtype, fusions); the host: none, f32
  LinearRows rows = LinearRows::kBatched;  // the host's fp32 linears
  AttentionConfig attention{};             // the device kernels of the attention calls
  bool dwdp = false;                     // block weights shared over DWDP (no first-block cache)
  DitPhaseProfiler* profiler = nullptr;  // the device's phase timing; null: none
};

// encoder_hidden_states [B, L, text_dim] (any device, any float dtype) → text embedder, then per
// block the cross-attention's K (after norm_k) and V [B, L, H, Dh], on the context's device in its
// compute dtype. image_tokens [B, L_img, image_dim] (the image path; FLF2V: both images' tokens,
// [B, 2·L_img, image_dim] or [2B, L_img, image_dim]) go through the image embedder before the text;
// the context's first positions then take the image K/V projections as diffusers splits them
// (transformer_forward.cpp image_path_tokens), the rest the text's.
TextContext wan_prepare_text(const WanForwardContext& c, const Tensor& encoder_hidden_states,
                             const Tensor& image_tokens = Tensor());

// WanTransformer::forward_local (transformer.h): this rank's proj_out tokens [B, S_loc, P·C_out]
// in the compute dtype, on the context's device. timestep [B] (per-sample modulation) or [B, S]
// (per token: time_modulation.h; the fused paths that need one gate per sample step aside).
Tensor wan_forward_local(const WanForwardContext& c, const Tensor& latents, const Tensor& timestep,
                         const TextContext& text, const SeqLayout& layout, SeqAttention& attention,
                         FirstBlockCache* cache, const StepPolicy& step);

// tokens [B, S, P·C_out] (any device; f32 or bf16 kept, others f32) → [B, C_out, T, H, W] f32 on
// the context's device.
Tensor wan_unpatchify(const WanForwardContext& c, const Tensor& tokens, int64_t T, int64_t H, int64_t W);

}  // namespace vgen
