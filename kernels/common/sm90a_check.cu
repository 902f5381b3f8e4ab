#include "kernels/common/sm90a_check.cuh"

#include <algorithm>

#include "kernels/common/tensor_map.cuh"
#include "kernels/common/wgmma_sm90.cuh"

namespace vgen::kern {

namespace {

// 1 where the probe's body exists in the code the device runs (an sm_90a cubin), else 0.
__device__ int g_sm90a_built = 0;
__global__ void sm90a_probe_kernel() {
#ifdef VGEN_SM90A_DEVICE
  g_sm90a_built = 1;
#endif
}

}  // namespace

Sm90aKernels::Sm90aKernels(size_t smem_bytes, std::initializer_list<const void*> kernels)
    : smem_bytes_(smem_bytes), kernels_(kernels) {}

int Sm90aKernels::device_sms() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (state_[dev] != 0) return std::max(state_[dev], 0);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return 0;
  if (prop.major != 9 || prop.minor != 0 || !tensor_map_encoder() ||
      size_t(prop.sharedMemPerBlockOptin) < smem_bytes_) {
    state_[dev] = -1;
    return 0;
  }
  if (cudaPeekAtLastError() != cudaSuccess) return 0;  // not ours to consume; ask again later
  sm90a_probe_kernel<<<1, 1>>>();
  int built = 0;
  if (cudaGetLastError() != cudaSuccess || cudaMemcpyFromSymbol(&built, g_sm90a_built, sizeof(int)) != cudaSuccess)
    return 0;
  bool ok = built == 1;
  for (const void* k : kernels_)
    ok = ok && cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes_)) == cudaSuccess;
  state_[dev] = ok ? std::max(prop.multiProcessorCount, 1) : -1;
  return std::max(state_[dev], 0);
}

}  // namespace vgen::kern
