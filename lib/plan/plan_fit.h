// What fits when a GPU runs out of memory (core/device_fault.h): `vgen plan`'s per-GPU estimate of
// the recipe and the nearest parallel_config (dwdp_size first, then other meshes of the same world
// size, then twice and four times the ranks) whose estimate fits a GPU of a given size.
#pragma once
#include <string>

#include "core/device_fault.h"
#include "io/recipe.h"
#include "plan/plan.h"

namespace vgen {

// Sum of the plan's per-GPU memory items.
double plan_memory_total(const Plan& plan);

// The estimate of `recipe` on `world` ranks and, for device_bytes > 0, the advice text (a change of
// parallel_config whose estimate fits 95% of device_bytes, as --set arguments).
DeviceOomAdvice plan_fit_advice(const Recipe& recipe, int world, const PlanModel& model, double device_bytes);

// An advisor for set_device_oom_advisor: reads the model's configs on first use.
DeviceOomAdvisor plan_oom_advisor(const Recipe& recipe, int world);

}  // namespace vgen
