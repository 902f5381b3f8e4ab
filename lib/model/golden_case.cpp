#include "model/golden_case.h"

#include <cmath>
#include <filesystem>

namespace vgen {
namespace fs = std::filesystem;

std::string GoldenCase::model_dir() const {
  VGEN_CHECK(params.contains("model_dir"), ExitCode::kInput, "case {} has no model_dir", name);
  return (fs::path(fixtures_dir) / params["model_dir"].get<std::string>()).string();
}

namespace {
void check_same_size(const std::string& what, const Tensor& out, const Tensor& ref) {
  VGEN_CHECK(out.numel() == ref.numel(), ExitCode::kInput, "{}: output {} vs reference {} differ in size", what,
             out.str(), ref.str());
}
std::vector<double> as_f64(const Tensor& t0) {
  Tensor t = t0.to(Device::kCPU);
  std::vector<double> v(size_t(t.numel()));
  if (t.dtype() == DType::kI64) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(t.data<int64_t>()[i]);
  } else {
    Tensor f = t.to(DType::kF32);
    for (size_t i = 0; i < v.size(); ++i) v[i] = f.f32()[i];
  }
  return v;
}
}  // namespace

void GoldenCase::rel_l2(const std::string& what, const Tensor& out, const Tensor& ref, double tol) {
  check_same_size(what, out, ref);
  auto a = as_f64(out), b = as_f64(ref);
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  double v = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  metrics.push_back({what, "rel-l2", v, tol, std::isfinite(v) && v <= tol});
}

void GoldenCase::max_abs(const std::string& what, const Tensor& out, const Tensor& ref, double tol) {
  check_same_size(what, out, ref);
  auto a = as_f64(out), b = as_f64(ref);
  double m = 0;
  bool finite = true;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) finite = false;
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  metrics.push_back({what, "max-abs", m, tol, finite && m <= tol});
}

void GoldenCase::mean_abs(const std::string& what, const Tensor& out, const Tensor& ref, double tol) {
  check_same_size(what, out, ref);
  auto a = as_f64(out), b = as_f64(ref);
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
  double m = a.empty() ? 0 : s / double(a.size());
  metrics.push_back({what, "mean-abs", m, tol, std::isfinite(m) && m <= tol});
}

void GoldenCase::exact(const std::string& what, const Tensor& out, const Tensor& ref) {
  check_same_size(what, out, ref);
  auto a = as_f64(out), b = as_f64(ref);
  double bad = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) bad += 1;
  metrics.push_back({what, "mismatches", bad, 0, bad == 0});
}

// precision fp8 against the fp32 fixtures (docs/fp8.md "Tolerances"). CPU: the emulation measured
// on the fixture set (dit_forward 1.14e-2, step latents at most 1.88e-2 after 4 steps, frames
// mean-abs at most 2.32e-3), with a margin of 2.6-4.3x for other fixture sets (more steps, other
// shapes; the per-step error grows about linearly with the step count). GPU: measured on one H200
// (results/dit/1xh200/2026-12-01_1xh200_fp8_dit.jsonl: dit_forward 1.23e-2, step latents at most 2.25e-2,
// frames at most 3.5e-3), the same margin of >= 3x.
double golden_fp8_tolerance(const std::string& what, bool cuda) {
  struct Tol {
    const char* what;
    double cpu, gpu;
  };
  static const Tol kTols[] = {{"dit_forward", 3e-2, 4e-2}, {"step_latents", 5e-2, 7e-2}, {"frames", 1e-2, 1.5e-2}};
  for (const Tol& t : kTols)
    if (what == t.what) return cuda ? t.gpu : t.cpu;
  VGEN_THROW(ExitCode::kInternal, "golden_fp8_tolerance: no fp8 tolerance for '{}'", what);
}

// precision fp4 (NVFP4 block linears, the first and last steps in bf16) against the fp32 fixtures,
// CPU emulation only. Measured: tests/golden dit_forward 3.90e-2, step latents at most 4.68e-2,
// frames mean-abs at most 4.90e-3; tests/golden-i2v step latents at most 6.38e-2 (I2V Wan 2.1),
// frames at most 1.27e-2. Tolerances 2.3-2.6x the worst of both sets. A block scale off by 2x (half
// the values saturating) gives dit_forward 1.32e-1, outside; each block's numerics are
// test_blockscale's exact cases (docs/fp8.md "Block scaling").
double golden_quantised_tolerance(const Recipe& recipe, const std::string& what) {
  if (!recipe.is_fp4()) return golden_fp8_tolerance(what, recipe.is_cuda());
  VGEN_CHECK(!recipe.is_cuda(), ExitCode::kUsage,
             "precision fp4 has no GPU tolerances: it has not run on a GPU (docs/support.md)");
  struct Tol {
    const char* what;
    double cpu;
  };
  static const Tol kTols[] = {{"dit_forward", 1e-1}, {"step_latents", 1.5e-1}, {"frames", 3e-2}};
  for (const Tol& t : kTols)
    if (what == t.what) return t.cpu;
  VGEN_THROW(ExitCode::kInternal, "golden_quantised_tolerance: no fp4 tolerance for '{}'", what);
}

}  // namespace vgen
