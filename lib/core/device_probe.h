// What the CUDA runtime says of this host's GPUs, asked before any work: whether `device: cuda` can
// run here at all (exit 12 with the runtime's reason when not) and how much memory the GPU a rank
// will use has free (the preflight's memory check). The CUDA calls are in device_probe_cuda.cpp.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace vgen {

struct DeviceCount {
  int count = 0;       // visible CUDA devices
  std::string reason;  // count 0: why, in the runtime's words (the error of cudaGetDeviceCount)
};

// The devices CUDA_VISIBLE_DEVICES exposes; in a build without CUDA count 0 and the reason says so.
// Clears the runtime's error, so a later call starts clean.
DeviceCount cuda_device_probe();

struct DeviceMemoryInfo {
  int device = 0;
  std::string name;  // as the driver reports it
  size_t free_bytes = 0, total_bytes = 0;
};

// Free and total memory of CUDA device `device` (made current: the device this rank will use);
// nullopt in a build without CUDA or when the runtime cannot answer.
std::optional<DeviceMemoryInfo> cuda_device_memory(int device);

// The throw for `device: cuda` without a usable GPU: kNoDevice naming the reason and what to do.
[[noreturn]] void throw_no_device(const std::string& reason);

}  // namespace vgen
