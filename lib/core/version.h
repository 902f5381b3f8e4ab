// What this vgen is: its release version (recorded in every video's fingerprint), the commit it was
// built from, the build options, and the versions of the GPU libraries it runs on.
#pragma once
#include <string>

namespace vgen {

const char* vgen_version();  // the release version, e.g. "0.9.0"
const char* vgen_commit();   // git describe at configure time, e.g. "1a02c80-dirty"; "unknown" outside git
const char* vgen_build_options();
// `vgen --version`: version, commit, build options and, with the CUDA backend, the CUDA runtime and
// driver, NCCL and cuDNN versions this process loads (no GPU needed).
std::string vgen_version_text();
// The runtime libraries' versions ("CUDA runtime 13.0, driver 13.0, NCCL 2.27.7, cuDNN 9.19.0"), or
// "no CUDA backend".
std::string gpu_library_versions();

}  // namespace vgen
