// How an ImageCondition (model/model.h) enters the denoising loop: the model input of a step, the
// per-token timesteps of known frames, and the final latents (docs/images.md "Conditioning").
#pragma once
#include <cstdint>

#include "model/model.h"

namespace vgen {

// latents [B, C, T, h, w] host f32 → the step's model input: the known frames put in place of the
// first k latent frames, then the extra channels appended → [B, C + C_x, T, h, w]. Without a
// condition (or with neither part) the latents themselves.
Tensor condition_model_input(const Tensor& latents, const ImageCondition& cond);

// latents [B, C, T, h, w] with the first k frames replaced by cond.fixed_latents (a copy); the
// latents themselves when there are none.
Tensor with_fixed_frames(const Tensor& latents, const ImageCondition& cond);

// The timestep of every post-patch token [B, S] f32: `t` everywhere but 0 on the tokens of the
// known frames, the first S·k/T tokens (tokens are frame-major). Undefined when no frame is known.
Tensor condition_token_timesteps(const ImageCondition& cond, double t, int64_t batch, int64_t num_tokens,
                                 int64_t latent_frames);

// Checks a condition against latents of `latent_shape` [B, C, T, h, w] (kInternal: a family bug).
void check_image_condition(const ImageCondition& cond, const Shape& latent_shape);

}  // namespace vgen
