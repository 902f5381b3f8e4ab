// `vgen compare` (compare.h): the two directories' `<stem>.safetensors`, video by video.
#include "tools/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "core/error.h"
#include "io/safetensors.h"

namespace vgen {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExt = ".safetensors";

// The stems of the regular `<stem>.safetensors` files directly in `dir` (not the text cache's).
std::set<std::string> stems_in(const std::string& dir, const char* side) {
  std::error_code ec;
  VGEN_CHECK(fs::is_directory(dir, ec), ExitCode::kInput, "vgen compare: {} '{}' is not a directory", side, dir);
  std::set<std::string> out;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // An entry that cannot be stat'ed (a dangling link) is not a video: skipped, not an error.
    std::error_code entry_ec;
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(entry_ec) && name.size() > std::strlen(kExt) && it->path().extension() == kExt)
      out.insert(it->path().stem().string());
  }
  VGEN_CHECK(!ec, ExitCode::kInput, "vgen compare: cannot list {} '{}': {}", side, dir, ec.message());
  return out;
}

// The saved `latents` and `video` of `path` as f32 (the file opened once); any problem of the file
// is the user's input (kInput).
struct Saved {
  Tensor latents, video;  // video [1, 3, F, H, W] in [-1, 1]
};
Saved load_saved(const std::string& path) {
  try {
    WeightStore s = WeightStore::open(path);
    for (const char* name : {"latents", "video"})
      VGEN_CHECK(s.has(name), ExitCode::kInput,
                 "vgen compare: {} has no tensor '{}' (written by vgen run with output.save_tensors: true)", path,
                 name);
    return {s.get_f32("latents"), s.get_f32("video")};
  } catch (const Error& e) {
    if (e.code() == ExitCode::kInput) throw;
    VGEN_THROW(ExitCode::kInput, "vgen compare: cannot read {}: {}", path, e.message());
  }
}

void check_same_shape(const Tensor& a, const Tensor& b, const std::string& pa, const std::string& pb,
                      const char* name) {
  VGEN_CHECK(a.shape() == b.shape(), ExitCode::kInput,
             "vgen compare: tensor '{}' is {} in {} but {} in {} (different recipes?)", name, a.str(), pa, b.str(),
             pb);
}

bool finite_all(const Tensor& t) {
  const float* p = t.f32();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

double rel_l2(const Tensor& a, const Tensor& b) {
  const float *pa = a.f32(), *pb = b.f32();
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(pa[i]) - double(pb[i]);
    num += d * d;
    den += double(pa[i]) * double(pa[i]);
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The pipeline's postprocess of the VAE output, (v·0.5 + 0.5) clamped to [0, 1], before the MSE.
void video_error(const Tensor& a, const Tensor& b, double& psnr_db, double& max_abs) {
  const float *pa = a.f32(), *pb = b.f32();
  double sq = 0.0;
  max_abs = 0.0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = std::clamp(double(pa[i]) * 0.5 + 0.5, 0.0, 1.0);
    const double y = std::clamp(double(pb[i]) * 0.5 + 0.5, 0.0, 1.0);
    sq += (x - y) * (x - y);
    max_abs = std::max(max_abs, std::fabs(x - y));
  }
  const double mse = a.numel() > 0 ? sq / double(a.numel()) : 0.0;
  psnr_db = mse > 0.0 ? 10.0 * std::log10(1.0 / mse) : std::numeric_limits<double>::infinity();
}

VideoComparison compare_one(const std::string& stem, const std::string& dir_a, const std::string& dir_b,
                            const CompareOptions& opt) {
  const std::string pa = (fs::path(dir_a) / (stem + kExt)).string(), pb = (fs::path(dir_b) / (stem + kExt)).string();
  VideoComparison v;
  v.name = stem;
  const Saved a = load_saved(pa), b = load_saved(pb);
  const Tensor &la = a.latents, &lb = b.latents, &va = a.video, &vb = b.video;
  check_same_shape(la, lb, pa, pb, "latents");
  check_same_shape(va, vb, pa, pb, "video");
  VGEN_CHECK(la.numel() > 0 && va.numel() > 0, ExitCode::kInput, "vgen compare: {} holds an empty tensor ({} / {})",
             pa, la.str(), va.str());
  v.frames = va.ndim() >= 3 ? va.dim(va.ndim() - 3) : 0;
  if (!finite_all(la) || !finite_all(lb) || !finite_all(va) || !finite_all(vb)) {
    v.status = "nan";
    v.latents_rel_l2 = v.video_psnr_db = v.video_max_abs = std::numeric_limits<double>::quiet_NaN();
    return v;
  }
  v.latents_rel_l2 = rel_l2(la, lb);
  video_error(va, vb, v.video_psnr_db, v.video_max_abs);
  const bool over = (opt.min_psnr_db >= 0.0 && v.video_psnr_db < opt.min_psnr_db) ||
                    (opt.max_rel_l2 >= 0.0 && v.latents_rel_l2 > opt.max_rel_l2);
  v.status = over ? "over" : "ok";
  return v;
}

std::string num(double x, const char* spec) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return "inf";
  return fmt::format(fmt::runtime(spec), x);
}

}  // namespace

Comparison compare_outputs(const std::string& dir_a, const std::string& dir_b, const CompareOptions& opt) {
  Comparison c;
  c.dir_a = dir_a, c.dir_b = dir_b, c.options = opt;
  const std::set<std::string> a = stems_in(dir_a, "A"), b = stems_in(dir_b, "B");
  VGEN_CHECK(!a.empty(), ExitCode::kInput,
             "vgen compare: A '{}' holds no <video>.safetensors (render with output.save_tensors: true)", dir_a);
  std::set<std::string> all = a;
  all.insert(b.begin(), b.end());
  for (const std::string& stem : all) {
    VideoComparison v;
    if (!b.count(stem) || !a.count(stem)) {
      v.name = stem;
      v.status = a.count(stem) ? "only_in_a" : "only_in_b";
      v.latents_rel_l2 = v.video_psnr_db = v.video_max_abs = std::numeric_limits<double>::quiet_NaN();
    } else {
      v = compare_one(stem, dir_a, dir_b, opt);
      ++c.compared;
    }
    if (v.status != "ok") ++c.failed;
    c.videos.push_back(std::move(v));
  }
  return c;
}

std::string format_comparison(const Comparison& c) {
  std::string s = fmt::format("vgen compare: A {} against B {}\n", c.dir_a, c.dir_b);
  s += fmt::format("{:<48} {:>6} {:>14} {:>11} {:>10}  {}\n", "video", "frames", "latents rel-L2", "video PSNR",
                   "max |diff|", "status");
  double min_psnr = std::numeric_limits<double>::infinity(), max_rel = 0.0, sum_psnr = 0.0;
  int measured = 0, finite_psnr = 0;  // videos with metrics; those of them not identical
  for (const VideoComparison& v : c.videos) {
    s += fmt::format("{:<48} {:>6} {:>14} {:>8} dB {:>10}  {}\n", v.name, v.frames, num(v.latents_rel_l2, "{:.3e}"),
                     num(v.video_psnr_db, "{:.2f}"), num(v.video_max_abs, "{:.2e}"), v.status);
    if (v.status != "ok" && v.status != "over") continue;
    ++measured;
    min_psnr = std::min(min_psnr, v.video_psnr_db);
    max_rel = std::max(max_rel, v.latents_rel_l2);
    if (std::isfinite(v.video_psnr_db)) sum_psnr += v.video_psnr_db, ++finite_psnr;
  }
  // The mean PSNR is over the videos that differ (an identical one has no finite PSNR).
  s += fmt::format("{} compared, {} failed; worst latents rel-L2 {}, lowest PSNR {} dB, mean PSNR of the differing {} dB",
                   c.compared, c.failed, measured ? num(max_rel, "{:.3e}") : "-", measured ? num(min_psnr, "{:.2f}") : "-",
                   finite_psnr ? num(sum_psnr / finite_psnr, "{:.2f}") : (measured ? "inf" : "-"));
  if (c.options.min_psnr_db >= 0.0) s += fmt::format(" (bound >= {} dB)", c.options.min_psnr_db);
  if (c.options.max_rel_l2 >= 0.0) s += fmt::format(" (bound rel-L2 <= {})", c.options.max_rel_l2);
  return s + "\n";
}

Json comparison_json(const Comparison& c) {
  auto val = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  Json j;
  j["dir_a"] = c.dir_a, j["dir_b"] = c.dir_b;
  j["min_psnr_db"] = c.options.min_psnr_db >= 0.0 ? Json(c.options.min_psnr_db) : Json(nullptr);
  j["max_rel_l2"] = c.options.max_rel_l2 >= 0.0 ? Json(c.options.max_rel_l2) : Json(nullptr);
  j["compared"] = c.compared, j["failed"] = c.failed;
  j["videos"] = Json::array();
  for (const VideoComparison& v : c.videos)
    j["videos"].push_back({{"name", v.name},
                           {"status", v.status},
                           {"frames", v.frames},
                           {"latents_rel_l2", val(v.latents_rel_l2)},
                           {"video_psnr_db", val(v.video_psnr_db)},
                           {"identical", std::isinf(v.video_psnr_db) && v.latents_rel_l2 == 0.0},
                           {"video_max_abs", val(v.video_max_abs)}});
  return j;
}

}  // namespace vgen
