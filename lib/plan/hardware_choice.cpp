#include "plan/hardware_choice.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace vgen {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::vector<HardwareProfile> shipped_profiles() {
  std::vector<HardwareProfile> out;
  for (const std::string& n : hardware_profile_names()) out.push_back(load_hardware_profile(n));
  return out;
}

}  // namespace

std::optional<HardwareProfile> profile_for_gpu(const std::string& gpu_name,
                                               const std::vector<HardwareProfile>& profiles) {
  const std::string gpu = lower(gpu_name);
  const HardwareProfile* best = nullptr;
  size_t best_len = 0;
  std::vector<std::string> tied;
  for (const HardwareProfile& p : profiles) {
    size_t len = 0;  // the longest detect word of p in the name: "GB200" beats "B200" in "NVIDIA GB200"
    for (const std::string& w : p.detect)
      if (gpu.find(lower(w)) != std::string::npos) len = std::max(len, w.size());
    if (len == 0 || len < best_len) continue;
    if (len > best_len) tied.clear();
    tied.push_back(p.name);
    best = &p;
    best_len = len;
  }
  VGEN_CHECK(tied.size() <= 1, ExitCode::kUsage, "the GPU '{}' matches the hardware profiles {} equally; name one",
             gpu_name, fmt::join(tied, ", "));
  if (!best) return std::nullopt;
  return *best;
}

std::optional<HardwareProfile> known_hardware(const Recipe& recipe, const std::optional<std::string>& gpu) {
  if (!recipe.hardware.empty()) return load_hardware_profile(recipe.hardware);
  if (!gpu) return std::nullopt;
  return profile_for_gpu(*gpu, shipped_profiles());
}

HardwareChoice choose_hardware(const std::string& named, const std::string& named_by, const Recipe& recipe,
                               const std::optional<std::string>& gpu) {
  if (!named.empty()) return {load_hardware_profile(named), named_by};
  if (!recipe.hardware.empty()) return {load_hardware_profile(recipe.hardware), "the recipe's `hardware` key"};
  const std::vector<HardwareProfile> profiles = shipped_profiles();
  if (gpu) {
    if (auto p = profile_for_gpu(*gpu, profiles)) return {*p, fmt::format("the GPU '{}'", *gpu)};
  }
  std::vector<std::string> names;
  for (const HardwareProfile& p : profiles) names.push_back(p.name);
  VGEN_THROW(ExitCode::kUsage,
             "which hardware should price {}? {}; name a profile with {}, or with the recipe's `hardware` key "
             "(profiles in {}: {}; or a .yaml path)",
             recipe.source_path.empty() ? std::string("the recipe") : recipe.source_path,
             gpu ? fmt::format("this machine's GPU '{}' matches no profile's `detect` words", *gpu)
                 : std::string("this machine has no GPU to detect"),
             named_by, hardware_dir(), names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
}

}  // namespace vgen
