#include "dist/local_device.h"

#include "core/error.h"
#include "core/log.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace vgen {

int select_local_device(const DistEnv& env) {
#ifdef VGEN_WITH_CUDA
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();  // clear it so later runtime calls start clean
    return -1;
  }
  VGEN_CHECK(e == cudaSuccess, ExitCode::kInternal, "cudaGetDeviceCount failed: {}", cudaGetErrorString(e));
  if (count <= 0) return -1;
  const int device = env.local_rank % count;
  if (env.local_size > count && env.local_rank == 0)
    log_warn("{} ranks on host {} share {} visible GPUs", env.local_size, env.host, count);
  e = cudaSetDevice(device);
  VGEN_CHECK(e == cudaSuccess, ExitCode::kInternal, "cudaSetDevice({}) for local rank {} failed: {}", device,
             env.local_rank, cudaGetErrorString(e));
  return device;
#else
  (void)env;
  return -1;
#endif
}

}  // namespace vgen
