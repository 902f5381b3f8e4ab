// `vgen plan`: validates a recipe for --world ranks and prints the mesh, shards and estimates;
// with --predict the calibrated time model for this mesh, or with --rank for every valid mesh.
#include <cstdio>
#include <fstream>

#include "cli.h"
#include "core/error.h"
#include "plan/plan.h"
#include "plan/mesh_ranking.h"

namespace vgen::cli {

int cmd_plan(const PlanArgs& a, const DistEnv& env) {
  Recipe recipe = load_recipe(a.recipe, a.sets);
  VGEN_CHECK(a.predict || (!a.rank && a.json.empty()), ExitCode::kUsage, "--rank and --json need --predict");
  const bool no_weights = a.no_weights;
  if (!a.predict) {
    Recipe r = recipe;
    Plan plan = no_weights ? make_plan(r, a.world, read_plan_model_configs(r)) : make_plan(r, a.world);
    if (env.world_rank == 0) std::fputs(format_plan(recipe, plan).c_str(), stdout);
    std::fflush(stdout);
    return 0;
  }
  const HardwareProfile hw = load_hardware_profile(a.hardware);
  const PlanModel model = no_weights ? read_plan_model_configs(recipe) : read_plan_model(recipe);
  if (recipe.parallel.auto_mesh) {
    recipe.parallel = choose_mesh(recipe, a.world, model, hw, a.videos);
    recipe.parallel.auto_mesh = true;
  }
  std::string text;
  Json json;
  if (a.rank) {
    const auto ranked = rank_meshes(recipe, a.world, model, hw, {a.videos, false});
    VGEN_CHECK(!ranked.empty(), ExitCode::kRecipe, "vgen plan --rank: no valid mesh of {} ranks for {}", a.world,
               recipe.source_path);
    text = format_ranking(recipe, hw, ranked, a.world, a.videos, size_t(a.top));
    json = {{"hardware", hw.name}, {"world", a.world}, {"videos", a.videos}, {"meshes", Json::array()}};
    for (auto& p : ranked) json["meshes"].push_back(prediction_json(p));
  } else {
    Plan plan = make_plan(recipe, a.world, model);
    Prediction p = predict(recipe, plan, hw);
    const Prediction one = predict_one_gpu(recipe, model, hw);
    p.efficiency = p.pc.dp_size * one.e2e_s / (a.world * p.e2e_s);
    text = format_plan(recipe, plan) + format_prediction(recipe, hw, p);
    json = {{"hardware", hw.name}, {"world", a.world}, {"meshes", Json::array({prediction_json(p)})}};
  }
  if (env.world_rank == 0) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (!a.json.empty()) {
      std::ofstream f(a.json);
      f << json.dump(2) << "\n";
      VGEN_CHECK(f.good(), ExitCode::kOutput, "cannot write {}", a.json);
    }
  }
  return 0;
}

}  // namespace vgen::cli
