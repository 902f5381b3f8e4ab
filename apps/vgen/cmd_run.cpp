// `vgen run`: recipe → preflight on every rank (no collective yet) → mesh → batch.
#include <filesystem>

#include "cli.h"
#include "core/log.h"
#include "core/gpu_info.h"
#include "dist/watchdog.h"
#include "batch/batch.h"
#include "plan/plan_fit.h"
#include "plan/hardware_choice.h"
#include "plan/mesh_ranking.h"
#include "plan/prefill_placement.h"
#include "plan/time_model.h"
#include "batch/preflight.h"
#include "batch/preflight_images.h"

namespace vgen::cli {

void check_launched_for(const ParallelConfig& pc, const DistEnv& env) {
  const int n = pc.world_size();
  VGEN_CHECK(env.world_size != 1 || n == 1, ExitCode::kRecipe,
             "parallel_config needs {} ranks (dp {} × cfg {} × cp {} × ulysses {}) but vgen runs as a single "
             "process: start it with `mpirun -np {} vgen ...` or `srun -n {} vgen ...`",
             n, pc.dp_size, pc.cfg_size, pc.cp_size(), pc.ulysses_size, n, n);
}

namespace {

// The checks every rank runs alike before any collective: recipe, mesh, model, prompts, output.
Recipe checked_recipe(const RunArgs& a, const DistEnv& env, RunOptions& opts, PreflightResult& pre) {
  Recipe recipe = load_recipe(a.recipe, a.sets);
  if (recipe.parallel.auto_mesh) resolve_auto_mesh(recipe, env.world_size);
  resolve_prefill_placement(recipe, env.world_size, env.local_rank);  // before the preflight weighs the memory
  check_launched_for(recipe.parallel, env);
  auto abs = [](const std::string& p) {
    return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
  };
  opts.prompts_override = abs(a.prompts);
  opts.out_override = abs(a.out);
  opts.retry_failed = a.retry_failed;
  opts.load_only = a.load_only;
  opts.no_overwrite = a.no_overwrite;
  pre = preflight_run(recipe, opts, env);
  return recipe;
}

// The watchdog's allowance (dist/watchdog_rule.h): runtime.collective_timeout_s when the recipe sets
// it, else derived from the time model's step and load for this recipe on its hardware profile (the
// recipe's `hardware`, else this node's GPU's: plan/hardware_choice.h). Without one (the CPU, another
// GPU) the watchdog measures the steps.
WatchdogOptions watchdog_options(const Recipe& recipe, const DistEnv& env) {
  WatchdogOptions o;
  o.timeout_s = recipe.runtime.collective_timeout_s;
  if (o.timeout_s > 0 || !recipe.is_cuda()) return o;
  try {
    const std::optional<HardwareProfile> hw = known_hardware(recipe, first_gpu_name());
    if (!hw) return o;
    const Prediction p = predict(recipe, make_plan(recipe, env.world_size), *hw);
    o.predicted_step_s = std::max(p.step_s, p.step_bf16_s);
    o.predicted_start_s = p.load_s + o.predicted_step_s;
    log_debug("watchdog: predicted step {:.2f} s, load {:.1f} s on {}", o.predicted_step_s, p.load_s, hw->name);
  } catch (const Error& e) {  // a recipe the model cannot price: the steps are measured instead
    log_debug("watchdog: no predicted step ({})", e.message());
  }
  return o;
}

}  // namespace

int cmd_run(const RunArgs& a, const DistEnv& env) {
  // Every rank validates the same inputs, then the ranks agree: a bad input ends every rank with the
  // one message of the lowest rank that found it, and a normal exit (no abort) with its code.
  RunOptions opts;
  PreflightResult pre;
  Recipe recipe;
  std::exception_ptr error;
  try {
    recipe = checked_recipe(a, env, opts, pre);
  } catch (...) {
    error = std::current_exception();
  }
  if (env.world_size == 1 && error) std::rethrow_exception(error);
  const WorldVerdict verdict = agree_on_failure(error ? error_code_of(error) : 0);  // collective
  if (verdict.code) {
    if (error && verdict.rank == env.world_rank) report_error(error);
    return verdict.code;
  }
  // A prompt line that any rank failed (an image it cannot read) fails on every rank (collective).
  agree_on_prompt_errors(pre.prompts_path, pre.prompts);
  log_info("recipe {}: {} prompts from {}, output {}, {} rank(s)", recipe.source_path, pre.prompts.size(),
           pre.prompts_path, pre.out_dir, env.world_size);
  // An out-of-memory names the plan's estimate and a mesh that fits (plan/plan_fit.h).
  set_device_oom_advisor(plan_oom_advisor(recipe, env.world_size));
  // From here on a rank that stops making progress ends the job (exit 8) instead of a hang.
  Watchdog watchdog(watchdog_options(recipe, env), env);  // collective over the world
  Mesh mesh = make_mesh(recipe.parallel, env);
  try {
    return run_batch(recipe, mesh, opts, pre);
  } catch (...) {
    // An error on this rank alone ends the job here, while the mesh lives: freeing its communicators
    // is collective in MPI, and the peers may be waiting in the batch's collectives.
    if (env.world_size > 1) dist_abort(report_error(std::current_exception()));
    throw;
  }
}

}  // namespace vgen::cli
