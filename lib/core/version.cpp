#include "core/version.h"

#include <fmt/format.h>

namespace vgen {

const char* vgen_version() {
#ifdef VGEN_VERSION_STRING
  return VGEN_VERSION_STRING;
#else
  return "dev";
#endif
}

const char* vgen_commit() {
#ifdef VGEN_GIT_COMMIT
  return VGEN_GIT_COMMIT;
#else
  return "unknown";
#endif
}

const char* vgen_build_options() {
#ifdef VGEN_BUILD_OPTIONS
  return VGEN_BUILD_OPTIONS;
#else
  return "unknown";
#endif
}

#ifndef VGEN_WITH_CUDA
std::string gpu_library_versions() { return "no CUDA backend"; }
#endif

std::string vgen_version_text() {
  return fmt::format("vgen {} (commit {})\nbuild: {}\nruntime: {}\n", vgen_version(), vgen_commit(),
                     vgen_build_options(), gpu_library_versions());
}

}  // namespace vgen
