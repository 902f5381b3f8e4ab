// The planner's facts of a Wan checkpoint's image side (model/plan_facts.h): what a line's images
// become, the CLIP encoder's weights and FLOPs, and the VAE encoder's FLOPs for the time model.
#pragma once
#include <cstddef>

#include "io/diffusers_dir.h"
#include "model/plan_facts.h"

namespace vgen {

// Fills m.conditioning, image_encoder_bytes (with `headers`), image_encoder_flops,
// condition_frames_all and vae_encode_flops for an image-conditioned checkpoint; nothing otherwise.
void plan_image_side(const DiffusersDir& dir, PlanModel& m, bool headers, size_t run_bytes);

// m.vae_encode_flops of the checkpoint's `vae` (a Wan VAE encoder, from vae/config.json).
void plan_wan_vae_encoder(const DiffusersDir& dir, PlanModel& m);
// m.vae_spatial / vae_temporal and vae_work of the checkpoint's `vae` decoder (vae/config.json when
// present; the Wan 2.1 VAE's defaults otherwise), vae_bytes with `headers` (plan_model.cpp).
void plan_wan_vae_decoder(const DiffusersDir& dir, PlanModel& m, bool headers);

}  // namespace vgen
