// select_local_device: local_rank modulo the visible GPU count, made current; -1 without GPUs.
#include <gtest/gtest.h>

#include "core/device_memory.h"
#include "dist/local_device.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>
#endif

using namespace vgen;

TEST(LocalDevice, LocalRankModuloVisibleGpus) {
  int count = 0;
#ifdef VGEN_WITH_CUDA
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  (void)cudaGetLastError();
#endif
  for (int local_rank = 0; local_rank < 9; ++local_rank) {
    DistEnv env;
    env.local_rank = local_rank;
    env.local_size = 9;
    const int dev = select_local_device(env);
    if (count == 0) {
      EXPECT_EQ(dev, -1);
      continue;
    }
    EXPECT_EQ(dev, local_rank % count);
#ifdef VGEN_WITH_CUDA
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, dev);
#endif
  }
}
