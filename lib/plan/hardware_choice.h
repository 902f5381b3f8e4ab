// Which hardware profile prices a recipe (`vgen plan --predict`, parallel_config.auto): the first of
// a name given by the caller (--hardware, $VGEN_HARDWARE), the recipe's `hardware` key, and the
// profile whose `detect` words are in the name of this machine's first GPU. None of them: kUsage
// naming the three ways and listing the shipped profiles, never a silent default.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "io/recipe.h"
#include "plan/hardware_profile.h"

namespace vgen {

struct HardwareChoice {
  HardwareProfile profile;
  std::string source;  // why this one: "--hardware", "the recipe's `hardware` key", "the GPU 'NVIDIA H200'"
};

// `named`: a profile name or .yaml path from `named_by` (e.g. "--hardware"); "" when not given.
// `gpu`: the first GPU's name (core/gpu_info.h), nullopt on a machine without one.
HardwareChoice choose_hardware(const std::string& named, const std::string& named_by, const Recipe& recipe,
                               const std::optional<std::string>& gpu);

// The same choice without a caller's name, or nullopt where none applies (no error): for defaults
// that do without a profile (the watchdog's predicted step time).
std::optional<HardwareProfile> known_hardware(const Recipe& recipe, const std::optional<std::string>& gpu);

// The profile of `profiles` whose longest `detect` word is in `gpu_name` (case-insensitive), or
// nullopt; kUsage when two profiles match equally well.
std::optional<HardwareProfile> profile_for_gpu(const std::string& gpu_name,
                                               const std::vector<HardwareProfile>& profiles);

}  // namespace vgen
