// Golden case runner of the CLIP vision tower (tests/golden-i2v/README.md), for the families whose
// checkpoints carry one (ModelFamily::run_golden_case).
#pragma once
#include "model/golden_case.h"

namespace vgen {

// `clip_image_encode`: the case's `pixel_values` (the image processor's output) through the
// `image_encoder` of its model directory (params.model) → `penultimate_hidden_states`, rel-L2
// ≤ 1e-4 in fp32 and ≤ 3e-2 in bf16 (tests/golden/README.md component tolerances). device cuda:
// this rank's GPU in the recipe's compute dtype.
void golden_clip_image_encode(GoldenCase& c);

}  // namespace vgen
