// Device faults on the GPU (core/device_fault.h): an allocation larger than the GPU is a
// DeviceOutOfMemory (exit 11) with the GPU's real free and total memory and what vgen holds; the
// CUDA checks map cudaErrorMemoryAllocation to it and sticky codes to kDistributed; a healthy
// context holds no sticky error.
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include "core/device_allocator.h"
#include "core/device_fault.h"
#include "core/device_memory.h"

using namespace vgen;

TEST(DeviceFaultGpu, AllocationBeyondTheGpuIsOutOfMemory) {
  VGEN_REQUIRE_GPU();
  size_t free_b = 0, total_b = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  const size_t huge = total_b + (size_t(64) << 30);
  DeviceAllocPhase phase("a test allocation");
  try {
    void* p = device_malloc(huge);
    device_free(p);
    FAIL() << "allocated " << huge << " bytes on a GPU of " << total_b;
  } catch (const DeviceOutOfMemory& e) {
    EXPECT_EQ(e.code(), ExitCode::kDeviceOutOfMemory);
    EXPECT_EQ(e.requested(), huge);
    EXPECT_EQ(e.total_bytes(), total_b);
    EXPECT_LE(e.free_bytes(), total_b);
    EXPECT_GT(e.free_bytes(), 0u);
    const std::string m = e.message();
    EXPECT_NE(m.find("out of device memory on GPU "), std::string::npos) << m;
    EXPECT_NE(m.find("while a test allocation"), std::string::npos) << m;
    EXPECT_NE(m.find("vgen holds"), std::string::npos) << m;
    EXPECT_NE(m.find(" free of "), std::string::npos) << m;
  }
  // The failed allocation left the context usable.
  EXPECT_EQ(cuda_sticky_error(), "");
  void* p = device_malloc(1 << 20);
  device_free(p);
}

TEST(DeviceFaultGpu, CudaChecksMapFaults) {
  VGEN_REQUIRE_GPU();
  EXPECT_THROW(cuda_check_status(int(cudaErrorMemoryAllocation), "cudaMalloc(test)"), DeviceOutOfMemory);
  try {
    cuda_check_status(int(cudaErrorIllegalAddress), "kernel(test)");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kDistributed);
    EXPECT_NE(e.message().find("sticky CUDA error on GPU "), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("cudaErrorIllegalAddress"), std::string::npos) << e.message();
  }
  try {
    cuda_check_status(int(cudaErrorInvalidValue), "cudaMemcpy(test)");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);  // not sticky: an ordinary failure
  }
  EXPECT_EQ(cuda_sticky_error(), "");
}

#else
VGEN_GPU_TESTS_NEED_CUDA(DeviceFaultGpu)
#endif
