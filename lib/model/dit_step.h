// One DiT evaluation over a sequence-parallel group: every rank embeds and transforms its token
// shard (Denoiser::forward_local), the output tokens [B, S_loc, P] are all-gathered on the sequence
// group, padding is dropped and the result unpatchified — the full flow prediction on every rank
// (docs/architecture.md "One denoising step").
#pragma once
#include "dist/communicator.h"
#include "model/first_block_cache.h"
#include "model/model.h"
#include "parallel/seq_attention.h"

namespace vgen {

// latents [B, C, T, H, W], timestep [B] f32 or [B, S] (per token, whole on every rank; the model
// reads its shard's columns) → [B, C_out, T, H, W] host f32 on every rank of `seq`.
// Shard of this rank: SeqLayout::make(S, seq.size(), seq.rank()). For a model on the device
// (Denoiser::on_device), `seq` must move device tensors (an NCCL group of
// dist/device_mesh.h, or a group of one) and the prediction is copied to the host at the end.
// `cache` (may be null): this stream's first-block cache; its decision is summed over `seq`.
// `step`: what this denoising step runs in.
Tensor dit_predict(const Denoiser& model, const Tensor& latents, const Tensor& timestep, const Conditioning& cond,
                   Communicator& seq, SeqAttention& attention, FirstBlockCache* cache = nullptr,
                   const StepPolicy& step = {});

// local [B, S_loc, P] of every rank of `seq` → [B, layout.tokens, P] (padding rows dropped).
// Host f32 tokens or device tokens of any dtype (then `seq` must be a device communicator).
Tensor gather_seq_tokens(Communicator& seq, const Tensor& local, const SeqLayout& layout);

}  // namespace vgen
