// `vgen plan --recipe R.yaml --world N`: validates a recipe for N ranks without loading weights and
// describes the run: the mesh (rank → coordinates → groups), token shards and padding, bytes moved
// by each collective per denoising step, and a per-GPU memory estimate. Only configs and
// safetensors headers are read, so it works on a directory holding just the config files.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dist/mesh.h"
#include "io/recipe.h"
#include "model/plan_facts.h"

namespace vgen {

struct PlanRank {
  int rank = 0;
  MeshCoord coord;
  int seq_rank = 0;
  std::vector<int> cfg, cp, row, col, ulysses, seq, vae;  // group members (world ranks); vae empty if none
};

struct PlanTokens {
  int latent_t = 0, latent_h = 0, latent_w = 0;
  int64_t tokens = 0, padded = 0, per_rank = 0;
};

struct PlanComm {
  std::string what;
  double bytes_per_step = 0;  // per rank
  std::string detail;
};

struct Plan {
  MeshShape shape;
  PlanModel model;
  PlanTokens tokens;
  std::vector<PlanRank> ranks;
  std::vector<PlanComm> comm;
  std::vector<std::pair<std::string, double>> memory;  // per-GPU bytes by item
  std::vector<std::string> notes;
  std::vector<PlanLora> loras;
};

// The recipe's LoRAs checked against the model's expert configs (ModelFamily::plan_loras); kModel /
// kRecipe as the load would report them.
std::vector<PlanLora> plan_loras(const Recipe& recipe);

// Reads the model configs (and safetensors headers where present) for the plan; the recipe's
// frames, pixels and max_sequence_length are checked against the model's limits first (kRecipe).
PlanModel read_plan_model(const Recipe& recipe);
// Reads the model configs only (no safetensors headers, sizes by config math): `--no-weights`.
PlanModel read_plan_model_configs(const Recipe& recipe);
// Validates the recipe for `world` ranks (kRecipe / kModel on problems) and computes the plan.
Plan make_plan(const Recipe& recipe, int world);
// The same for a model already read (no files, no device warnings): e.g. to compare meshes.
// with_ranks false leaves Plan::ranks empty (the per-rank group table; the time model's ranking).
Plan make_plan(const Recipe& recipe, int world, const PlanModel& model, bool with_ranks = true);
std::string format_plan(const Recipe& recipe, const Plan& plan);

// Helpers shared with tests: group members of `rank` and the compact list form "[0,4,...,32]".
PlanRank plan_rank(const MeshShape& m, int rank);
std::string format_rank_list(const std::vector<int>& v);

}  // namespace vgen
