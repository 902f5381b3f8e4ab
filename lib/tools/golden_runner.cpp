#include <cmath>
#include <filesystem>

#include "core/log.h"
#include "dist/device_mesh.h"
#include "ops/attention_backend.h"
#include "tools/golden.h"
#include "model/registry.h"
#include "pipeline/precision.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

// The generic kinds here; any other kind is a component's, run by the family of the case's model
// (component_family: also a pipeline class whose components a family knows before it renders it).
// A case's kind is its name, or its JSON's "kind" (several cases of one kind in a set).
void run_case(GoldenCase& c) {
  const std::string kind = c.params.contains("kind") && c.params["kind"].is_string()
                               ? c.params["kind"].get<std::string>() : c.name;
  if (kind.rfind("sched_", 0) == 0) return golden_scheduler(c);
  if (kind.rfind("pipeline_", 0) == 0) return golden_pipeline(c);
  if (kind == "image_resize") return golden_image_resize(c);
  if (!fs::is_regular_file(fs::path(c.model_dir()) / "model_index.json")) {
    // A component saved alone (no pipeline folder): the family that knows the kind runs it.
    for (const ModelFamily* f : model_families())
      if (f->run_golden_case(kind, c)) return;
    VGEN_THROW(ExitCode::kInput, "no runner for case '{}' (kind {}) of the component folder {}", c.name, kind,
               c.model_dir());
  }
  if (!component_family(DiffusersDir(c.model_dir())).run_golden_case(kind, c))
    VGEN_THROW(ExitCode::kInput, "no runner for case '{}' (kind {})", c.name, kind);
}

}  // namespace

int run_golden(const std::string& fixtures_dir, const Recipe& recipe, Mesh& mesh, const std::string& only_case) {
  fs::path cases = fs::path(fixtures_dir) / "cases";
  VGEN_CHECK(fs::is_directory(cases), ExitCode::kInput, "fixture set {} has no cases/ folder", fixtures_dir);
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(cases))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  if (!only_case.empty()) {
    VGEN_CHECK(std::find(names.begin(), names.end(), only_case) != names.end(), ExitCode::kUsage,
               "no case '{}' in {}", only_case, cases.string());
    names = {only_case};
  }
  if (recipe.is_cuda() && recipe.is_quantised()) {  // refused up front on every rank (exit 3), not per case
    select_mesh_device();
    refuse_fp8_without_device(recipe, *mesh.world);
  }
  bool root = mesh.world_rank == 0;
  int passed = 0, failed = 0;
  for (auto& name : names) {
    GoldenCase c;
    c.name = name;
    c.fixtures_dir = fixtures_dir;
    c.recipe = &recipe;
    c.mesh = &mesh;
    // precision fp8 on the GPU computes in bf16 outside the DiT's fp8 parts: the bf16 tolerances for
    // the other modules (the fp8 cases pick their own: golden_dit_forward, golden_pipeline).
    c.bf16 = recipe.compute_dtype() == DType::kBF16;
    std::string error;
    try {
      c.params = read_json_file((cases / (name + ".json")).string(), ExitCode::kInput);
      std::string st = (cases / (name + ".safetensors")).string();
      if (fs::exists(st)) c.tensors = WeightStore::open(st);
      run_case(c);
      if (c.metrics.empty()) error = "the case produced no comparison";
    } catch (const Error& e) {
      error = e.message();
    } catch (const std::exception& e) {
      error = e.what();
    }
    bool ok = error.empty();
    for (auto& m : c.metrics) ok = ok && m.pass;
    if (root) {
      for (auto& m : c.metrics)
        std::printf("%-18s %-22s %-10s %12.4e  tol %9.2e  %s\n", name.c_str(), m.what.c_str(), m.metric.c_str(),
                    m.value, m.tol, m.pass ? "PASS" : "FAIL");
      if (!error.empty()) std::printf("%-18s %-22s %-10s %12s  %13s  FAIL (%s)\n", name.c_str(), "-", "error", "-", "",
                                      error.c_str());
      std::printf("%-18s => %s\n", name.c_str(), ok ? "PASS" : "FAIL");
      std::fflush(stdout);
    }
    (ok ? passed : failed)++;
  }
  if (root) {
    std::printf("%d passed, %d failed\n", passed, failed);
    std::fflush(stdout);
  }
  return failed;
}

}  // namespace vgen
