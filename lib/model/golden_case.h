// A golden fixture case (format: tests/golden/README.md) and its comparisons: the tools' runner
// (tools/golden.h) reads it, a family's component runners (ModelFamily::run_golden_case) and the
// generic ones fill its metrics.
#pragma once
#include <string>
#include <vector>

#include "core/json.h"
#include "dist/mesh.h"
#include "io/recipe.h"
#include "io/safetensors.h"

namespace vgen {

struct GoldenMetric {
  std::string what;    // e.g. "output", "samples[3]"
  std::string metric;  // rel-l2 | max-abs | mean-abs | exact
  double value = 0;
  double tol = 0;
  bool pass = false;
};

struct GoldenCase {
  std::string name;
  std::string fixtures_dir;  // the fixture set root (holds cases/ and the model dirs)
  Json params;               // cases/NAME.json
  WeightStore tensors;       // cases/NAME.safetensors
  const Recipe* recipe = nullptr;
  Mesh* mesh = nullptr;
  bool bf16 = false;  // precision bf16: use the bf16 tolerances
  std::vector<GoldenMetric> metrics;

  std::string model_dir() const;  // <fixtures>/<params.model_dir>
  // Compare helpers append a metric (tolerance chosen by the caller).
  void rel_l2(const std::string& what, const Tensor& out, const Tensor& ref, double tol);
  void max_abs(const std::string& what, const Tensor& out, const Tensor& ref, double tol);
  void mean_abs(const std::string& what, const Tensor& out, const Tensor& ref, double tol);
  void exact(const std::string& what, const Tensor& out, const Tensor& ref);  // i64 or f32 equality
};

// precision fp8 tolerances against the diffusers fp32 fixtures (docs/fp8.md "Tolerances", with how
// they were derived): `what` = "dit_forward" (rel-L2), "step_latents" (rel-L2 of every step),
// "frames" (mean-abs over [0, 1]); `cuda`: the GPU kernels (bf16 between ops) instead of the CPU
// emulation.
double golden_fp8_tolerance(const std::string& what, bool cuda);
// The tolerance of `what` under the recipe's quantised precision: fp8's above (MXFP8 included),
// precision fp4's emulation (docs/fp8.md "Block scaling"; fp4 on a GPU is unmeasured: kUsage).
double golden_quantised_tolerance(const Recipe& recipe, const std::string& what);

}  // namespace vgen
