// Up-front validation of a `vgen run` before any weights are loaded or any collective starts:
// recipe and mesh (against the model's head count), the device, the model directory and every
// component the pipeline needs (configs parsed, every safetensors header and offset checked), the
// sizes against the model's limits (batch/preflight_sizes.h), initial latents, the prompt file and the
// images of its lines (batch/preflight_images.h), that the output directory can be created and
// written, and on the GPU the memory estimate. Cheap (headers only, and the lines' images), so every
// rank runs it: a bad input ends every rank with the same error instead of a hang.
#pragma once
#include <string>
#include <vector>

#include "io/prompts.h"
#include "io/recipe.h"
#include "batch/batch.h"
#include "dist/bootstrap.h"
#include "model/model.h"
#include "model/size_limits.h"
#include "pipeline/device_check.h"

namespace vgen {

struct PreflightResult {
  std::string prompts_path;  // absolute
  std::string out_dir;       // absolute, exists and is writable
  std::vector<PromptItem> prompts;
  int num_heads = 0;
};

// Throws vgen::Error with the exit code of the first problem found (kRecipe, kModel, kInput, kOutput,
// kNoDevice, kDeviceOutOfMemory).
PreflightResult preflight_run(const Recipe& recipe, const RunOptions& opts, const DistEnv& env);

// Parts, usable on their own. preflight_model: kRecipe / kModel / kNoDevice, the recipe's sizes
// included; `limits` (may be null) receives the model's size limits.
// `traits` (may be null) receives the checkpoint's traits (model/model.h).
void preflight_model(const Recipe& recipe, int world_size, int* num_heads, SizeLimits* limits = nullptr,
                     ModelTraits* traits = nullptr);
void check_output_dir(const std::string& dir);                               // kOutput

}  // namespace vgen
