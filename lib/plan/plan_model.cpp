// The model facts of a plan, from the family of the recipe's checkpoint (model/registry.h).
#include "io/diffusers_dir.h"
#include "model/registry.h"
#include "plan/plan.h"

namespace vgen {
namespace {

const ModelFamily& family_of(const Recipe& recipe) {
  VGEN_CHECK(!recipe.model.empty(), ExitCode::kRecipe, "{}: model: required key is missing", recipe.source_path);
  return model_family(DiffusersDir(recipe.model));
}

// The recipe's sizes against the model's (model/size_limits.h), as `vgen run` checks them.
const ModelFamily& checked_family(const Recipe& recipe) {
  const ModelFamily& f = family_of(recipe);
  check_generation_sizes(recipe, f.size_limits(DiffusersDir(recipe.model)));
  return f;
}

}  // namespace

PlanModel read_plan_model(const Recipe& recipe) { return checked_family(recipe).plan_model(recipe, true); }
PlanModel read_plan_model_configs(const Recipe& recipe) { return checked_family(recipe).plan_model(recipe, false); }

std::vector<PlanLora> plan_loras(const Recipe& recipe) {
  if (recipe.lora.empty()) return {};
  return family_of(recipe).plan_loras(recipe);
}

}  // namespace vgen
