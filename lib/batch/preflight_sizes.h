// Every size checked before any work (docs/batch.md "Sizes"), by every rank before the first
// collective so the ranks agree and one prints: the recipe's frames, height, width and
// max_sequence_length against the model's limits (kRecipe), each prompt line's num_frames (the line
// fails alone), CFG on two ranks that has nothing to do (a warning), and with device: cuda vgen plan's
// per-GPU memory estimate against the free memory of the GPU this rank will use (kDeviceOutOfMemory).
#pragma once
#include <vector>

#include "core/device_probe.h"
#include "dist/bootstrap.h"
#include "io/prompts.h"
#include "io/recipe.h"
#include "model/plan_facts.h"
#include "model/size_limits.h"

namespace vgen {

// Each valid prompt's num_frames against `limits` (the recipe's own sizes are checked with the model,
// batch/preflight.h): a line beyond them gets the error, naming the file and line, and is reported
// failed. Warns once per job when parallel_config.cfg_size 2 meets guidance_scale <= 1.
void preflight_sizes(const Recipe& recipe, const SizeLimits& limits, const std::string& prompts_path,
                     std::vector<PromptItem>& prompts);

// Each valid line's own frame size (generation.image_max_area, set by preflight_images) against
// `limits`; a line beyond them fails alone.
void preflight_line_sizes(const SizeLimits& limits, const std::string& prompts_path, std::vector<PromptItem>& prompts);

// vgen plan's estimate for `recipe` on `world` ranks, times the ranks sharing this GPU, against its
// free memory: kDeviceOutOfMemory naming the estimate, the GPU and a parallel_config that fits.
void check_device_memory(const Recipe& recipe, int world, const PlanModel& model, const DeviceMemoryInfo& gpu,
                         int ranks_on_device);

// With device: cuda on a CUDA build: check_device_memory on the GPU this rank will use (local rank
// modulo the visible GPUs, as the mesh picks it); nothing on the CPU.
void preflight_device_memory(const Recipe& recipe, const DistEnv& env);

}  // namespace vgen
