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

}  // namespace vgen
