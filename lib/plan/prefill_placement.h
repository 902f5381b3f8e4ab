// Where a model whose prompt is a prefix of its own attention (Cosmos 3, PlanPromptPrefix) keeps the
// tower that encodes the prompt: `text.device stream` keeps it in pinned host memory and copies it to
// the GPU one layer ahead of each prefill's compute; `auto` streams it when the plan's per-GPU
// estimate with it resident does not fit the GPU and the estimate with it streamed does, else keeps
// it resident. The budget is 95% of the GPU's memory, as the memory advice and --predict's `fits`.
#pragma once
#include <string>

#include "io/recipe.h"
#include "model/plan_facts.h"
#include "plan/hardware_profile.h"

namespace vgen {

// The rule of `auto`: the two estimates and the GPU's memory, in bytes.
bool prefill_should_stream(double resident_bytes, double streamed_bytes, double device_bytes);

struct PrefillPlacement {
  bool decided = false;  // auto weighed against a GPU (else the family's placement stands)
  bool streamed = false;
  double resident_bytes = 0, streamed_bytes = 0, device_bytes = 0;
  std::string why;
};

// text.device auto on device cuda for a model with a prompt prefix, device_bytes > 0: the rule on
// the plan's estimates for `world` ranks, written into model.prompt_prefix (streamed, why; `gpu`
// names where device_bytes come from). Anything else leaves `model` as its family made it.
PrefillPlacement place_prefill(const Recipe& recipe, int world, PlanModel& model, double device_bytes,
                               const std::string& gpu);
// The same against a hardware profile's GPU (`vgen plan --predict`, the mesh ranking).
PrefillPlacement place_prefill(const Recipe& recipe, int world, PlanModel& model, const HardwareProfile& hw);

// `vgen run`, before the preflight's memory check: the same choice for this job against the memory
// of the GPU this rank will use (else the hardware profile's). A stream choice sets
// recipe.text.device to stream; either is logged and recorded in recipe.resolved (timing.json's
// recipe) as text.device_choice. A recipe whose model cannot be planned is left for the preflight.
void resolve_prefill_placement(Recipe& recipe, int world, int local_rank);

}  // namespace vgen
