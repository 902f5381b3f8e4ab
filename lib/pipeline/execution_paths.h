// The execution paths of a run, chosen once at start (ops/path_table.h): this rank's GPU, the code
// of this build it runs, the attention and GEMM paths for the recipe's precision and whether
// precision fp8 runs there; logged at --log-level info and recorded in timing.json.
#pragma once
#include "core/json.h"
#include "dist/communicator.h"
#include "io/recipe.h"

namespace vgen {

// With device: cuda, collective over `world`: a GPU this build has no code for (or older than
// compute capability 8.0) is refused on every rank alike (kNoDevice, naming the first such rank)
// before any weight is loaded; otherwise the paths are logged and returned as timing.json's
// "execution_paths" (this rank's). Null with device: cpu.
Json start_execution_paths(const Recipe& recipe, Communicator& world);

}  // namespace vgen
