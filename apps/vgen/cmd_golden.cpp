// `vgen golden`: runs the fixture cases with the recipe's device, precision and parallel_config.
#include <filesystem>

#include "cli.h"
#include "tools/golden.h"

namespace vgen::cli {

int cmd_golden(const GoldenArgs& a, const DistEnv& env) {
  VGEN_CHECK(std::filesystem::is_directory(a.fixtures), ExitCode::kInput, "fixture directory {} does not exist",
             a.fixtures);
  // Without --recipe: CPU, fp32, a single-rank mesh unless --set says otherwise.
  Recipe recipe = a.recipe.empty() ? parse_recipe("device: cpu\nprecision: fp32\n", "<golden defaults>", a.sets)
                                   : load_recipe(a.recipe, a.sets);
  check_launched_for(recipe.parallel, env);
  Mesh mesh = make_mesh(recipe.parallel, env);
  int failed = run_golden(a.fixtures, recipe, mesh, a.case_name);
  return failed == 0 ? int(ExitCode::kOk) : int(ExitCode::kGoldenFailed);
}

}  // namespace vgen::cli
