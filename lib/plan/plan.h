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

namespace vgen {

// Model facts the plan needs (configs; weight sizes from headers when present, else config math).
struct PlanModel {
  int heads = 40, head_dim = 128, layers = 40, ffn = 13824;
  int in_channels = 16, out_channels = 16, text_dim = 4096, freq_dim = 256;
  std::array<int, 3> patch = {1, 2, 2};
  int vae_spatial = 8, vae_temporal = 4;
  int experts = 1;  // 2 when model_index.json lists transformer_2
  int64_t dit_params = 0;       // one expert
  int64_t dit_bytes = 0;        // one expert at the run dtype (keep-fp32 modules in fp32)
  int64_t dit_block_bytes = 0;  // the largest block, at the run dtype (DWDP double buffer)
  std::string dit_source;       // "safetensors headers" or "config math"
  int64_t te_params = 0, te_bytes = 0;
  std::string te_source;
  int64_t vae_bytes = -1;  // -1: unknown (no weights)
  int text_len = 512;      // UMT5 context length (max_sequence_length)
  // VAE decoder and text encoder shapes (vae/config.json, text_encoder/config.json) for the time model.
  int vae_base_dim = 96, vae_res_blocks = 2;
  std::vector<int> vae_dim_mult = {1, 2, 4, 4};
  std::vector<bool> vae_temporal_down = {false, true, true};
  int64_t te_embed_params = 0;  // vocab · d_model (a lookup, no FLOPs)
  int te_layers = 24, te_dmodel = 4096;
  int dim() const { return heads * head_dim; }
};

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

// One recipe LoRA on one expert: what `vgen plan` lists (headers read, names and shapes checked).
struct PlanLora {
  int index = 0;          // lora[index]
  std::string path;
  double scale = 1.0;
  std::string component;  // transformer | transformer_2
  int tensors = 0;        // weights (and biases) it changes
  int64_t max_rank = 0;
  size_t skipped_keys = 0;  // lora_strict false: keys that match nothing
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

// The recipe's LoRAs checked against the model's transformer configs (plan_lora.cpp); kModel /
// kRecipe as the load would report them.
std::vector<PlanLora> plan_loras(const Recipe& recipe);

// Reads the model configs (and safetensors headers where present) for the plan.
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
