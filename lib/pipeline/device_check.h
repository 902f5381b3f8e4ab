// The device a recipe asks for, checked against this build before any work.
#pragma once
#include "io/recipe.h"

namespace vgen {

// device: cuda in a build without CUDA is kRecipe when the recipe is to run (a warning when it is only
// planned, e.g. on a login node); in a CUDA build on a host whose runtime finds no GPU it is kNoDevice
// with the runtime's reason (planned: no check); settings that do nothing on device: cpu warn.
void preflight_device(const Recipe& recipe, bool will_run);

}  // namespace vgen
