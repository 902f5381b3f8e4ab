#include "core/device_probe.h"

#include <cstdlib>

#include "core/error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
DeviceCount cuda_device_probe() { return {0, "this vgen was built without the CUDA backend (VGEN_CUDA=OFF)"}; }
std::optional<DeviceMemoryInfo> cuda_device_memory(int) { return std::nullopt; }
#endif

void throw_no_device(const std::string& reason) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  VGEN_THROW(ExitCode::kNoDevice,
             "device: cuda, but this host has no usable GPU: {}{}; run on a GPU node (one process per GPU) or use "
             "device: cpu",
             reason, visible ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", visible) : std::string());
}

}  // namespace vgen
