// The batch runner: renders every prompt of the recipe's prompt file on this replica mesh.
#pragma once
#include <string>

#include "dist/mesh.h"
#include "io/recipe.h"

namespace vgen {

struct RunOptions {
  std::string prompts_override;  // --prompts
  std::string out_override;      // --out
  bool retry_failed = false;     // --retry-failed
};

// Collective over the world. Returns the process exit code (0, or kPromptsFailed when some prompts
// failed). Writes MP4s and <out>/timing.json.
int run_batch(const Recipe& recipe, Mesh& mesh, const RunOptions& opts);

}  // namespace vgen
