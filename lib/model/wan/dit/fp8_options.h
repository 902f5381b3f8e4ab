// precision fp8 of the Wan DiT from the recipe's fp8_config (docs/fp8.md).
#pragma once
#include "io/recipe.h"
#include "model/wan/dit/transformer_device.h"

namespace vgen {

// The DiT options of the recipe's fp8_config (device: the bf16 weights are kept only when some
// step runs in bf16; host: always). kRecipe on a bf16_linears name that is not a block linear.
WanFp8Options wan_fp8_options(const Recipe& recipe);

}  // namespace vgen
