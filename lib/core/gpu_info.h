// What this machine's GPUs are, asked without making a CUDA context the caller has to own: for the
// choices that depend on the hardware (`vgen plan --predict`'s profile) on any build.
#pragma once
#include <optional>
#include <string>

namespace vgen {

// The name of CUDA device 0 as the driver reports it ("NVIDIA H100 80GB HBM3"); nullopt on a build
// without CUDA, or when the runtime finds no device (the reason is not needed by the callers).
std::optional<std::string> first_gpu_name();

}  // namespace vgen
