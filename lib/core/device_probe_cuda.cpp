// device_probe.h on the CUDA runtime.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/device_probe.h"

namespace vgen {

DeviceCount cuda_device_probe() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // "no device" is an answer here, not a sticky error for later calls
    return {0, fmt::format("cudaGetDeviceCount failed: {} ({})", cudaGetErrorName(e), cudaGetErrorString(e))};
  }
  if (count <= 0) return {0, "the CUDA runtime finds no device"};
  return {count, ""};
}

std::optional<DeviceMemoryInfo> cuda_device_memory(int device) {
  DeviceMemoryInfo m;
  m.device = device;
  cudaDeviceProp prop{};
  if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
      cudaMemGetInfo(&m.free_bytes, &m.total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  m.name = prop.name;
  return m;
}

}  // namespace vgen
