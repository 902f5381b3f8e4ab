// `vgen plan`: validates a recipe for --world ranks and prints the mesh, shards and estimates;
// with --predict the calibrated time model for this mesh, or with --rank for every valid mesh.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli.h"
#include "core/error.h"
#include "core/gpu_info.h"
#include "plan/hardware_choice.h"
#include "plan/plan.h"
#include "plan/mesh_ranking.h"
#include "plan/prefill_placement.h"

namespace vgen::cli {
namespace {

// A recipe whose model is not on this machine (the shipped recipes name /models/...): kModel with
// the way to plan it from the config-only copies of recipes/models/ (next to recipes/hardware/).
void check_model_here(const Recipe& recipe) {
  namespace fs = std::filesystem;
  if (fs::is_directory(recipe.model)) return;
  const fs::path models = fs::proximate(fs::path(hardware_dir()).parent_path() / "models");
  std::vector<std::string> copies;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models, ec))
    if (fs::is_regular_file(e.path() / "model_index.json")) copies.push_back(e.path().filename().string());
  std::sort(copies.begin(), copies.end());
  std::string name = fs::path(recipe.model).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  std::string pick = "<name>";  // the copy whose folder name begins the model's, e.g. wan2.1-t2v-14b
  for (const std::string& c : copies)
    if (name.starts_with(c) && (pick == "<name>" || c.size() > pick.size())) pick = c;
  VGEN_THROW(ExitCode::kModel,
             "model directory {} does not exist here (`model` of {}); to plan without the checkpoint, use its "
             "config-only copy: --no-weights --set model={} ({}: {})",
             recipe.model, recipe.source_path.empty() ? std::string("the recipe") : recipe.source_path,
             (models / pick).string(), models.string(),
             copies.empty() ? std::string("none found") : fmt::format("{}", fmt::join(copies, ", ")));
}

}  // namespace

int cmd_plan(const PlanArgs& a, const DistEnv& env) {
  Recipe recipe = load_recipe(a.recipe, a.sets);
  VGEN_CHECK(a.predict || (!a.rank && a.json.empty()), ExitCode::kUsage, "--rank and --json need --predict");
  const bool no_weights = a.no_weights;
  check_model_here(recipe);
  if (!a.predict) {
    Recipe r = recipe;
    Plan plan = no_weights ? make_plan(r, a.world, read_plan_model_configs(r)) : make_plan(r, a.world);
    // text.device auto of a prompt-prefix model, weighed against this machine's GPU when a profile knows it.
    const std::optional<HardwareProfile> hw =
        plan.model.prompt_prefix ? known_hardware(r, first_gpu_name()) : std::nullopt;
    if (hw) {
      PlanModel model = plan.model;
      place_prefill(r, a.world, model, *hw);
      const std::vector<PlanLora> loras = plan.loras;
      plan = make_plan(r, a.world, model);
      plan.loras = loras;
    }
    if (env.world_rank == 0) std::fputs(format_plan(recipe, plan).c_str(), stdout);
    std::fflush(stdout);
    return 0;
  }
  const HardwareChoice choice = choose_hardware(a.hardware, "--hardware", recipe, first_gpu_name());
  const HardwareProfile& hw = choice.profile;
  PlanModel model = no_weights ? read_plan_model_configs(recipe) : read_plan_model(recipe);
  if (recipe.parallel.auto_mesh) {
    recipe.parallel = choose_mesh(recipe, a.world, model, hw, a.videos);
    recipe.parallel.auto_mesh = true;
  }
  // text.device auto of a prompt-prefix model against the profile's GPU (--rank: mesh by mesh).
  if (!a.rank) place_prefill(recipe, a.world, model, hw);
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
  json["hardware_from"] = choice.source;
  if (env.world_rank == 0) {
    std::printf("hardware profile: %s (from %s)\n", hw.name.c_str(), choice.source.c_str());
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
