// Picks this rank's GPU on its node.
#pragma once
#include "dist/bootstrap.h"

namespace vgen {

// Makes GPU (local_rank mod visible GPU count) current and returns its index. The CUDA runtime
// only counts the devices CUDA_VISIBLE_DEVICES exposes, so that variable is honoured as is.
// Returns -1 when built without CUDA or when no GPU is visible (the caller decides if that is
// an error, e.g. for `device: cuda`).
int select_local_device(const DistEnv& env);

}  // namespace vgen
