// Whether the current device runs one family of this build's Hopper kernels (the kernels of one
// .cu: attention_wgmma.cu, attention_fp8.cu, gemm_int8.cu): compute capability 9.0, the driver's
// tensor-map encoder, the family's dynamic shared memory within the device's opt-in limit, sm_90a
// code in this build (a probe kernel), and that limit raised for each of the family's kernels.
// Host code; never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>
#include <mutex>
#include <vector>

namespace vgen::kern {

// One per family, a function-local static of its launcher file. Checked once per device; a check
// that fails for a passing reason (an error pending from other work, a failed probe) is not
// remembered. Thread-safe.
class Sm90aKernels {
 public:
  // kernels: the family's __global__ functions, each launched with smem_bytes of dynamic shared memory.
  Sm90aKernels(size_t smem_bytes, std::initializer_list<const void*> kernels);

  int device_sms();  // the current device's SM count where it runs the family, else 0
  bool available() { return device_sms() > 0; }

 private:
  static constexpr int kMaxDevices = 64;
  size_t smem_bytes_;
  std::vector<const void*> kernels_;
  std::mutex mu_;
  int state_[kMaxDevices] = {};  // 0 unknown, -1 no, else the SM count
};

}  // namespace vgen::kern
