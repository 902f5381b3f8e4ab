// The precision a run computes in, as every rank agrees on it before any weight: the refusal of
// precision fp8 on a GPU without FP8 tensor cores, and what timing.json reports of the precision.
#pragma once
#include "core/json.h"
#include "dist/communicator.h"
#include "io/recipe.h"

namespace vgen {

// With device cuda and precision fp8 (fp4), every rank of `world` checks that its current GPU has
// FP8 (block-scaled FP4) tensor cores this build drives (ops/fp8.h cuda_precision_available, with
// the recipe's switches) — collectively, so that every rank
// throws the same kRecipe error (exit 3) naming precision, the first such rank and its GPU's name
// and compute capability, before any weight is loaded. Never a fallback to bf16. Nothing otherwise.
void refuse_fp8_without_device(const Recipe& recipe, Communicator& world);
// What timing.json reports of the precision: {"precision", "compute", "self_attention", "gemm",
// "cross_attention", "bf16_steps": [...]} (fp8_config resolved for generation.num_inference_steps).
Json precision_report(const Recipe& recipe);

}  // namespace vgen
