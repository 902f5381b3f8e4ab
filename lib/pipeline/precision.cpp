#include "pipeline/precision.h"

#include <cstdlib>
#include <string>

#include "ops/fp8.h"
#include "pipeline/rank_refusal.h"

namespace vgen {
namespace {

// Test hook VGEN_INJECT_NO_FP8=1 (every rank) or @R (world rank R only): that rank's GPU counts as
// one without FP8 tensor cores, to exercise the refusal on a Hopper machine (docs/fp8.md).
bool inject_no_fp8(int rank) {
  const char* e = std::getenv("VGEN_INJECT_NO_FP8");
  if (!e || !*e) return false;
  const std::string s = e;
  if (s == "1" || s == "all") return true;
  return s[0] == '@' && s.size() > 1 && std::atoi(s.c_str() + 1) == rank;
}

}  // namespace

void refuse_fp8_without_device(const Recipe& recipe, Communicator& world) {
  if (!recipe.is_cuda() || !recipe.is_quantised()) return;
  std::string gpu;
  const bool ok = cuda_precision_available(recipe.precision, recipe.fp8, &gpu, recipe.attention.backend) &&
                  !inject_no_fp8(world.rank());
  // Every rank ends with the first refusing rank's GPU, none waits for a peer in a later collective.
  const RankRefusal r = agree_on_refusal(world, ok, gpu);
  if (!r.any) return;
  if (recipe.is_fp4())
    VGEN_THROW(ExitCode::kRecipe,
               "{}: precision fp4 needs block-scaled FP4 tensor cores (compute capability 10.x or 12.x, Blackwell) "
               "that this vgen drives, but rank {}'s GPU is {}{}; vgen never falls back to bf16 silently: use "
               "precision bf16 (or fp8) on this GPU",
               recipe.source_path, r.first, r.reason, r.others("lack them"));
  VGEN_THROW(ExitCode::kRecipe,
             "{}: precision fp8 needs a GPU with FP8 tensor cores that this build drives (compute capability 8.9 "
             "or newer; fp8_config and attention_config pick the paths, docs/support.md), but rank {}'s GPU is "
             "{}{}; vgen never falls back to bf16 silently: use precision bf16 on this GPU",
             recipe.source_path, r.first, r.reason, r.others("lack them"));
}

Json precision_report(const Recipe& recipe) {
  Json j;
  j["precision"] = precision_name(recipe.precision);
  j["compute"] = dtype_name(recipe.compute_dtype());
  if (!recipe.is_quantised()) return j;
  const Fp8Config& f = recipe.fp8;
  j["emulated"] = !recipe.is_cuda();  // the CPU: the quantisation, then fp32 math
  j["self_attention"] = !f.attention  ? std::string(dtype_name(recipe.compute_dtype()))
                        : f.qk_int8() ? "fp8 (INT8 Q·Kᵀ, e4m3 P·V)"
                                      : "fp8 e4m3";
  std::string bf16_linears;
  for (const std::string& n : f.bf16_linears) bf16_linears += (bf16_linears.empty() ? "; bf16: " : ", ") + n;
  const GemmFormat gf = f.gemm_format_on(0);
  const std::string label = gf == GemmFormat::kNvfp4   ? "NVFP4"
                            : gf == GemmFormat::kMxfp8 ? "MXFP8"
                            : f.gemm_int8()            ? "INT8"
                                                       : "fp8 e4m3";
  j["gemm"] = f.gemm ? label + " (block linears" + bf16_linears + ")" : dtype_name(recipe.compute_dtype());
  j["cross_attention"] = dtype_name(recipe.compute_dtype());
  const char* key = recipe.is_fp4() ? "fp4_config" : "fp8_config";
  j[key] = recipe.resolved.contains(key) ? recipe.resolved[key] : Json::object();
  Json steps = Json::array();
  const int total = recipe.generation.num_inference_steps;
  for (int i = 0; i < total; ++i)
    if (!f.step_in_fp8(i, total)) steps.push_back(i);
  j["bf16_steps"] = steps;  // 0-based indices of the steps that run wholly in bf16
  return j;
}

}  // namespace vgen
