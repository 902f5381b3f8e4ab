// Every valid mesh of N ranks priced by the time model (`vgen plan --predict --rank`), its JSON
// form (`--json FILE`), and the choice of `parallel_config.auto`.
#pragma once
#include <string>
#include <vector>

#include "core/json.h"
#include "plan/time_model.h"

namespace vgen {

struct RankOptions {
  int videos = 1;          // the job's video count: meshes are ordered by its predicted time
  bool keep_explicit = false;  // keep the recipe's explicit parallel_config size keys (auto)
};

// The meshes of `world` ranks (dp × cfg × Ulysses dividing the heads × ring or every Attention2D
// grid, parallel VAE 1..16 in powers of two, DWDP 1, 2, 4, 8 inside an NVLink domain, DWDP 1 only
// with precision fp8's GEMMs on the GPU) that
// validate, each predicted; best first: fits memory, then the job time of `videos` videos
// (ceil(videos / dp) · e2e), then fewer GPUs idle in the VAE, then the lower memory.
std::vector<Prediction> rank_meshes(const Recipe& recipe, int world, const PlanModel& model,
                                    const HardwareProfile& hw, const RankOptions& opt);

// The job time `rank_meshes` orders by.
double job_seconds(const Prediction& p, int videos);

// parallel_config.auto: the recipe's parallel_config with the best mesh's sizes for `world`
// ranks; explicit size keys keep their values. kRecipe when no mesh with them fits.
ParallelConfig choose_mesh(const Recipe& recipe, int world, const PlanModel& model, const HardwareProfile& hw,
                           int videos);

// The --rank table: meshes that differ only in dwdp_size and predict the same times share a row,
// their memory per dwdp_size in the last column (DWDP trades memory, not time, in the model);
// `limit` rows.
std::string format_ranking(const Recipe& recipe, const HardwareProfile& hw, const std::vector<Prediction>& ranked,
                           int world, int videos, size_t limit);
Json prediction_json(const Prediction& p);

}  // namespace vgen

namespace vgen {

// `vgen run` with parallel_config.auto: replaces the recipe's sizes by choose_mesh for `world`
// ranks and one video on the profile of choose_hardware ($VGEN_HARDWARE, else the recipe's
// `hardware`, else the GPU's; plan/hardware_choice.h), logs the choice and
// re-resolves Recipe::resolved (timing.json's "recipe" then holds the chosen sizes). Every rank
// computes the same choice from the same files.
void resolve_auto_mesh(Recipe& recipe, int world);

}  // namespace vgen
