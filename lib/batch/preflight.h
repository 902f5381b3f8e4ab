// Up-front validation of a `vgen run` before any weights are loaded or any collective starts:
// recipe and mesh (against the model's head count), the model directory and every component the
// pipeline needs (configs parsed, every safetensors header and offset checked), initial latents,
// the prompt file, and that the output directory can be created and written. Cheap (headers only),
// so every rank runs it: a bad input ends every rank with the same error instead of a hang.
#pragma once
#include <string>
#include <vector>

#include "io/prompts.h"
#include "io/recipe.h"
#include "batch/batch.h"
#include "pipeline/device_check.h"

namespace vgen {

struct PreflightResult {
  std::string prompts_path;  // absolute
  std::string out_dir;       // absolute, exists and is writable
  std::vector<PromptItem> prompts;
  int num_heads = 0;
};

// Throws vgen::Error with the exit code of the first problem found (kRecipe, kModel, kInput, kOutput).
PreflightResult preflight_run(const Recipe& recipe, const RunOptions& opts, int world_size);

// Parts, usable on their own.
void preflight_model(const Recipe& recipe, int world_size, int* num_heads);  // kRecipe / kModel
void check_output_dir(const std::string& dir);                               // kOutput

}  // namespace vgen
