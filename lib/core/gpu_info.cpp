#include "core/gpu_info.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace vgen {

std::optional<std::string> first_gpu_name() {
#ifdef VGEN_WITH_CUDA
  int count = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    return std::string(prop.name);
  (void)cudaGetLastError();  // no device is an answer here, not a sticky error for later calls
#endif
  return std::nullopt;
}

}  // namespace vgen
