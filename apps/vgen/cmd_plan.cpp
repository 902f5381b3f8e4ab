// `vgen plan`: validates a recipe for --world ranks and prints the mesh, shards and estimates.
#include <cstdio>

#include "cli.h"
#include "pipeline/plan.h"

namespace vgen::cli {

int cmd_plan(const PlanArgs& a, const DistEnv& env) {
  Recipe recipe = load_recipe(a.recipe, a.sets);
  Plan plan = make_plan(recipe, a.world);
  if (env.world_rank == 0) {
    std::fputs(format_plan(recipe, plan).c_str(), stdout);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace vgen::cli
