// vgen CLI: parse arguments, call lib/, map errors to exit codes (README "Exit codes").
// A vgen::Error is caught once here: logged (it carries rank and host), then with several ranks
// dist_abort(code) ends every rank of the job within seconds; a single rank exits normally.
#include <CLI/CLI.hpp>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli.h"
#include "core/device_fault.h"
#include "core/error.h"
#include "core/log.h"
#include "core/version.h"

namespace {

using vgen::ExitCode;

extern "C" void on_signal(int) { _exit(int(ExitCode::kInterrupted)); }

}  // namespace

namespace vgen::cli {

int error_code_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return int(err.code());
  } catch (...) {
    return int(ExitCode::kInternal);
  }
}

int report_error(std::exception_ptr e) {
  int code = int(ExitCode::kInternal);
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    log_error("{}", err.what());
    code = int(err.code());
  } catch (const std::exception& err) {
    log_error("[rank {} on {}] internal error: {}", process_rank(), process_host(), err.what());
  } catch (...) {
    log_error("[rank {} on {}] internal error: unknown exception", process_rank(), process_host());
  }
  // A failure that left this rank's GPU context unusable (a sticky CUDA error) ends the job as a
  // device fault, whatever call noticed it first.
  if (code == int(ExitCode::kInternal)) {
    const std::string sticky = cuda_sticky_error();
    if (!sticky.empty()) {
      log_error("[rank {} on {}] sticky CUDA error {}: this rank's GPU context is unusable, ending the job (exit 8)",
                process_rank(), process_host(), sticky);
      code = int(ExitCode::kDistributed);
    }
  }
  return code;
}

}  // namespace vgen::cli

namespace {

// `vgen --recipe R.yaml …` means `vgen run --recipe R.yaml …`.
std::vector<std::string> with_implicit_run(int argc, char** argv) {
  // The subcommand is the first argument that is neither a global flag nor its value, so a value
  // that reads like a subcommand (`--out compare`) is not taken for one.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") return args;
    if (a == "--log-level") {
      ++i;
      continue;
    }
    if (a == "--log-all-ranks" || a.rfind("--log-level=", 0) == 0) continue;
    if (a == "run" || a == "golden" || a == "plan" || a == "compare") return args;
    break;
  }
  if (args.size() > 1) args.insert(args.begin() + 1, "run");
  return args;
}

vgen::LogLevel parse_level(const std::string& s) {
  if (s == "debug") return vgen::LogLevel::kDebug;
  if (s == "warn") return vgen::LogLevel::kWarn;
  if (s == "error") return vgen::LogLevel::kError;
  return vgen::LogLevel::kInfo;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // --version needs no MPI and no recipe: answered before anything starts.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--version") == 0) {
      std::fputs(vgen::vgen_version_text().c_str(), stdout);
      return 0;
    }
  vgen::DistEnv env;
  try {
    env = vgen::dist_init(&argc, &argv);
  } catch (const vgen::Error& e) {
    std::fprintf(stderr, "vgen: error: %s\n", e.what());
    return int(e.code());
  }

  vgen::cli::RunArgs run;
  vgen::cli::GoldenArgs golden;
  vgen::cli::PlanArgs plan;
  vgen::cli::CompareArgs compare;
  std::string log_level = "info";
  bool log_all = false;

  CLI::App app{"vgen: Wan 2.1 / 2.2 text-to-video batch generator (one process per GPU under mpirun/srun)"};
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--log-level", log_level, "debug | info | warn | error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app.add_flag("--log-all-ranks", log_all, "print info lines from every rank, not only rank 0");
  app.set_version_flag("--version", vgen::vgen_version_text(), "print the version, commit, build options and GPU library versions");

  CLI::App* c_run = app.add_subcommand("run", "generate every prompt of the recipe (also: vgen --recipe R.yaml)");
  c_run->add_option("--recipe", run.recipe, "recipe YAML")->required();
  c_run->add_option("--prompts", run.prompts, "prompt file (overrides the recipe's `prompts`)");
  c_run->add_option("--out", run.out, "output directory (overrides output.dir)");
  c_run->add_option("--set", run.sets, "override a recipe key: key.path=value (value parsed as YAML)");
  c_run->add_flag("--retry-failed", run.retry_failed, "render only the prompts the previous timing.json marks failed");
  c_run->add_flag("--load-only", run.load_only, "load the model, write <out>/load.json with the load times, render nothing");
  c_run->add_flag("--no-overwrite", run.no_overwrite,
                  "refuse (exit 5) when an existing video would be rendered again (stale, damaged or unverifiable)");

  CLI::App* c_golden = app.add_subcommand("golden", "run the golden fixture cases and compare");
  c_golden->add_option("--fixtures", golden.fixtures, "fixture set (holds cases/ and the model dirs)")->required();
  c_golden->add_option("--recipe", golden.recipe, "recipe YAML (default: cpu, fp32, one rank)");
  c_golden->add_option("--set", golden.sets, "override a recipe key: key.path=value");
  c_golden->add_option("--case", golden.case_name, "run only this case");

  CLI::App* c_plan = app.add_subcommand("plan", "validate a recipe for N ranks and print mesh, shards, estimates");
  c_plan->add_option("--recipe", plan.recipe, "recipe YAML")->required();
  c_plan->add_option("--world", plan.world, "number of ranks")
      ->required()
      ->check(CLI::Validator(
          [](std::string& s) {
            const bool ok = !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos &&
                            std::stoll(s) >= 1;
            return ok ? std::string() : "--world must be a whole number of ranks >= 1, got '" + s + "'";
          },
          "RANKS >= 1"));
  c_plan->add_option("--set", plan.sets, "override a recipe key: key.path=value");
  c_plan->add_flag("--predict", plan.predict, "add the predicted times of the calibrated cost model");
  c_plan->add_option("--hardware", plan.hardware, "hardware profile of recipes/hardware/ or a .yaml path (default: the recipe's `hardware`, else the GPU found here)");
  c_plan->add_flag("--rank", plan.rank, "with --predict: every valid mesh of --world ranks, best first");
  c_plan->add_option("--json", plan.json, "with --predict: write the prediction(s) as JSON to this file");
  c_plan->add_flag("--no-weights", plan.no_weights, "read only the model's configs (no safetensors headers)");
  c_plan->add_option("--videos", plan.videos, "with --rank: order meshes by the time of this many videos (default 1)")
      ->check(CLI::Range(1, 1000000000));
  c_plan->add_option("--top", plan.top, "with --rank: rows to print (default 20)")->check(CLI::Range(1, 1000000000));

  CLI::App* c_compare = app.add_subcommand(
      "compare", "compare two output directories rendered with output.save_tensors: latents rel-L2, video PSNR");
  c_compare->add_option("dir_a", compare.dir_a, "reference output directory")->required();
  c_compare->add_option("dir_b", compare.dir_b, "output directory to compare with it")->required();
  const CLI::Validator finite_bound(
      [](std::string& s) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool ok = end && *end == '\0' && !s.empty() && std::isfinite(v) && v >= 0.0;
        return ok ? std::string() : "a bound must be a finite number >= 0, got '" + s + "'";
      },
      "NUMBER >= 0");
  c_compare->add_option("--min-psnr", compare.min_psnr, "fail (exit 10) when a video's PSNR is below this (dB)")
      ->check(finite_bound);
  c_compare->add_option("--max-rel-l2", compare.max_rel_l2, "fail (exit 10) when a video's latents differ more")
      ->check(finite_bound);
  c_compare->add_option("--json", compare.json, "also write the comparison as JSON to this file");

  std::vector<std::string> args = with_implicit_run(argc, argv);
  std::vector<const char*> cargs;
  for (auto& s : args) cargs.push_back(s.c_str());

  int code = 0;
  bool failed = false;
  try {
    app.parse(int(cargs.size()), cargs.data());
    // --log-level when given, else VGEN_LOG_LEVEL (read by the logger), else info.
    if (app.get_option("--log-level")->count() > 0) vgen::log_set_level(parse_level(log_level));
    if (log_all) vgen::log_set_all_ranks(true);
    if (c_run->parsed()) code = vgen::cli::cmd_run(run, env);
    else if (c_golden->parsed()) code = vgen::cli::cmd_golden(golden, env);
    else if (c_plan->parsed()) code = vgen::cli::cmd_plan(plan, env);
    else if (c_compare->parsed()) code = vgen::cli::cmd_compare(compare, env);
  } catch (const CLI::ParseError& e) {
    if (env.world_rank == 0) app.exit(e);
    code = e.get_exit_code() == 0 ? 0 : int(ExitCode::kUsage);
    failed = code != 0;
  } catch (...) {
    code = vgen::cli::report_error(std::current_exception());
    failed = true;
  }
  if (failed && env.world_size > 1) vgen::dist_abort(code);
  vgen::dist_finalize();
  return code;
}
