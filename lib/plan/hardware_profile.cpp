#include "plan/hardware_profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace vgen {
namespace fs = std::filesystem;

double EfficiencyCurve::at(double x) const {
  if (points.empty()) return 0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  for (size_t i = 1; i < points.size(); ++i)
    if (x <= points[i].first) {
      const auto& [x0, y0] = points[i - 1];
      const auto& [x1, y1] = points[i];
      const double f = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
      return y0 + f * (y1 - y0);
    }
  return points.back().second;
}

namespace {

struct Reader {
  std::string path;
  YAML::Node root;

  YAML::Node node(const std::string& key) const {
    YAML::Node n = YAML::Clone(root);
    std::stringstream ss(key);
    for (std::string part; std::getline(ss, part, '.');) {
      if (!n.IsMap() || !n[part]) VGEN_THROW(ExitCode::kRecipe, "hardware profile {}: {}: missing", path, key);
      n = n[part];
    }
    return n;
  }
  double number(const std::string& key) const {
    YAML::Node n = node(key);
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      VGEN_THROW(ExitCode::kRecipe, "hardware profile {}: {}: expected a number", path, key);
    }
    VGEN_CHECK(std::isfinite(v) && v > 0, ExitCode::kRecipe, "hardware profile {}: {}: must be a positive number, got {}",
               path, key, v);
    return v;
  }
  // An optional list of strings (empty when absent).
  std::vector<std::string> texts(const std::string& key) const {
    const YAML::Node n = static_cast<const YAML::Node&>(root)[key];
    if (!n) return {};
    VGEN_CHECK(n.IsSequence(), ExitCode::kRecipe, "hardware profile {}: {}: expected a list of strings", path, key);
    std::vector<std::string> out;
    for (size_t i = 0; i < n.size(); ++i) {
      VGEN_CHECK(n[i].IsScalar() && !n[i].as<std::string>().empty(), ExitCode::kRecipe,
                 "hardware profile {}: {}[{}]: expected a non-empty string", path, key, i);
      out.push_back(n[i].as<std::string>());
    }
    return out;
  }
  std::string text(const std::string& key) const {
    YAML::Node n = node(key);
    VGEN_CHECK(n.IsScalar(), ExitCode::kRecipe, "hardware profile {}: {}: expected a string", path, key);
    return n.as<std::string>();
  }
  EfficiencyCurve curve(const std::string& key) const {
    YAML::Node n = node(key);
    VGEN_CHECK(n.IsSequence() && n.size() >= 1, ExitCode::kRecipe,
               "hardware profile {}: {}: expected a list of [size, efficiency] pairs", path, key);
    EfficiencyCurve c;
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string k = fmt::format("{}[{}]", key, i);
      VGEN_CHECK(n[i].IsSequence() && n[i].size() == 2, ExitCode::kRecipe,
                 "hardware profile {}: {}: expected [size, efficiency]", path, k);
      double x = 0, y = 0;
      try {
        x = n[i][0].as<double>(), y = n[i][1].as<double>();
      } catch (const YAML::Exception&) {
        VGEN_THROW(ExitCode::kRecipe, "hardware profile {}: {}: expected two numbers", path, k);
      }
      VGEN_CHECK(std::isfinite(x) && x > 0 && std::isfinite(y) && y > 0 && y <= 1, ExitCode::kRecipe,
                 "hardware profile {}: {}: size must be > 0 and efficiency in (0, 1], got [{}, {}]", path, k, x, y);
      VGEN_CHECK(c.points.empty() || x > c.points.back().first, ExitCode::kRecipe,
                 "hardware profile {}: {}: sizes must ascend", path, k);
      c.points.push_back({x, y});
    }
    return c;
  }
  double fraction(const std::string& key) const {
    const double v = number(key);
    VGEN_CHECK(v <= 1, ExitCode::kRecipe, "hardware profile {}: {}: a fraction of a peak must be <= 1, got {}", path,
               key, v);
    return v;
  }
  FabricCost fabric(const std::string& key) const {
    FabricCost f;
    auto link = [&](const char* kind) {
      return LinkCost{number(fmt::format("{}.{}.gbps", key, kind)), number(fmt::format("{}.{}.latency_us", key, kind))};
    };
    f.all_to_all = link("all_to_all");
    f.all_gather = link("all_gather");
    f.p2p = link("p2p");
    f.copy_engine = link("copy_engine");
    return f;
  }
};

std::string exe_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return fs::path(buf).parent_path().string();
}

}  // namespace

std::string hardware_dir() {
  if (const char* e = std::getenv("VGEN_HARDWARE_DIR"); e && *e) return e;
  if (fs::is_directory("recipes/hardware")) return fs::absolute("recipes/hardware").string();
  const std::string exe = exe_dir();
  for (const char* rel : {"../../recipes/hardware", "../recipes/hardware", "../share/vgen/hardware"}) {
    fs::path p = fs::path(exe) / rel;
    if (!exe.empty() && fs::is_directory(p)) return fs::canonical(p).string();
  }
#ifdef VGEN_SOURCE_HARDWARE_DIR
  // A build directory outside the source tree (e.g. /tmp/build): the profiles of its sources.
  if (fs::is_directory(VGEN_SOURCE_HARDWARE_DIR)) return VGEN_SOURCE_HARDWARE_DIR;
#endif
  return "recipes/hardware";
}

std::vector<std::string> hardware_profile_names() {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(hardware_dir(), ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& path) {
  Reader r{path, {}};
  try {
    r.root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    VGEN_THROW(ExitCode::kRecipe, "hardware profile {}: malformed YAML: {}", path, e.what());
  }
  VGEN_CHECK(r.root.IsMap(), ExitCode::kRecipe, "hardware profile {}: expected a mapping of keys", path);
  HardwareProfile h;
  h.source_path = path;
  h.name = r.text("name");
  h.gpu = r.text("gpu");
  h.detect = r.texts("detect");
  const double domain = r.number("nvlink_domain");
  VGEN_CHECK(domain == std::floor(domain) && domain <= 1e6, ExitCode::kRecipe,
             "hardware profile {}: nvlink_domain: expected a whole number of GPUs, got {}", path, domain);
  h.nvlink_domain = int(domain);
  h.memory_gib = r.number("memory_gib");
  h.bf16_tflops = r.number("peak.bf16_tflops");
  h.fp8_tflops = r.number("peak.fp8_tflops");
  h.fp32_tflops = r.number("peak.fp32_tflops");
  h.hbm_tbps = r.number("peak.hbm_tbps");
  h.gemm = r.curve("efficiency.gemm_by_rows");
  h.attention = r.curve("efficiency.attention_by_gflop");
  h.attention_cudnn = r.curve("efficiency.attention_cudnn_by_gflop");
  h.elementwise_efficiency = r.fraction("efficiency.elementwise");
  h.vae_efficiency = r.fraction("efficiency.vae");
  h.vae_halo_conv_us = r.number("parallel_vae.halo_conv_us");
  h.intra = r.fabric("links.intra");
  h.inter = r.fabric("links.inter");
  h.loader_gbps = r.number("host.loader_gbps");
  h.mp4_mpix_per_s = r.number("host.mp4_mpix_per_s");
  h.frame_mpix_per_s = r.number("host.frame_mpix_per_s");
  h.text_fixed_s = r.number("host.text_fixed_s");
  h.forward_overhead = r.number("host.forward_overhead");
  if (static_cast<const YAML::Node&>(r.root)["fp8"]) {
    Fp8Profile f;
    f.gemm = r.curve("fp8.gemm_by_rows");
    if (static_cast<const YAML::Node&>(r.root)["fp8"]["gemm_int8_by_rows"]) f.gemm_int8 = r.curve("fp8.gemm_int8_by_rows");
    f.attention = r.curve("fp8.attention_by_gflop");
    f.gemm_quant = r.fraction("fp8.gemm_quant");
    f.attention_quant = r.fraction("fp8.attention_quant");
    h.fp8 = f;
  }
  return h;
}

HardwareProfile load_hardware_profile(const std::string& name) {
  std::string path = name;
  if (!name.ends_with(".yaml")) path = (fs::path(hardware_dir()) / (name + ".yaml")).string();
  if (!fs::is_regular_file(path)) {
    const auto names = hardware_profile_names();
    VGEN_THROW(ExitCode::kRecipe, "unknown hardware profile '{}' (profiles in {}: {})", name, hardware_dir(),
               names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
  }
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_hardware_profile(ss.str(), path);
}

}  // namespace vgen
