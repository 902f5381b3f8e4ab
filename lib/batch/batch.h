// The batch runner: renders every prompt of the recipe's prompt file on this replica mesh.
#pragma once
#include <string>

#include "dist/mesh.h"
#include "io/recipe.h"

namespace vgen {

struct PreflightResult;  // batch/preflight.h

struct RunOptions {
  std::string prompts_override;  // --prompts
  std::string out_override;      // --out
  bool retry_failed = false;     // --retry-failed
  bool load_only = false;        // --load-only: load, write <out>/load.json, render nothing
  bool no_overwrite = false;     // --no-overwrite: refuse (kInput) when an existing video would be rendered again
};

// Collective over the world, after preflight_run (every rank, same inputs). Returns the process exit
// code (0, kPromptsFailed when some prompts failed, kInterrupted after SIGINT/SIGTERM, kInput when
// --no-overwrite refuses, before the model loads). Writes MP4s, their sidecars and <out>/timing.json.
int run_batch(const Recipe& recipe, Mesh& mesh, const RunOptions& opts, const PreflightResult& pf);

}  // namespace vgen
