// Subcommands of the vgen CLI; each returns the process exit code (README "Commands").
#pragma once
#include <exception>
#include <string>
#include <vector>

#include "dist/bootstrap.h"

namespace vgen::cli {

struct RunArgs {
  std::string recipe, prompts, out;
  std::vector<std::string> sets;
  bool retry_failed = false;
  bool load_only = false;
  bool no_overwrite = false;
};

struct GoldenArgs {
  std::string fixtures, recipe, case_name;
  std::vector<std::string> sets;
};

struct CompareArgs {
  std::string dir_a, dir_b, json;
  double min_psnr = -1.0, max_rel_l2 = -1.0;
};

struct PlanArgs {
  std::string recipe;
  int world = 0;
  std::vector<std::string> sets;
  bool predict = false;       // --predict: the time model (plan/time_model.h)
  std::string hardware;       // --hardware: else the recipe's `hardware`, else the detected GPU
  bool rank = false;          // --rank: every valid mesh of --world ranks, best first
  std::string json;           // --json FILE
  bool no_weights = false;    // --no-weights: configs only, no safetensors headers
  int videos = 1;             // --videos K: order meshes by the time of K videos
  int top = 20;               // --top K: rows of the --rank table
};

// A recipe for several ranks started as one process: say how to launch it (kRecipe).
void check_launched_for(const ParallelConfig& pc, const DistEnv& env);

// Logs an error caught from a subcommand (a vgen::Error carries its rank and host) and returns its
// exit code (kInternal for anything else).
int report_error(std::exception_ptr e);
// The exit code of an error, without logging it (a vgen::Error's code, else kInternal).
int error_code_of(std::exception_ptr e);

int cmd_run(const RunArgs& a, const DistEnv& env);
int cmd_golden(const GoldenArgs& a, const DistEnv& env);
int cmd_plan(const PlanArgs& a, const DistEnv& env);
int cmd_compare(const CompareArgs& a, const DistEnv& env);

}  // namespace vgen::cli
