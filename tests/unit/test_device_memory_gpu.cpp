// Device memory on the GPU: caching allocator reuse and statistics, host/device copies through the
// compute stream, CUDA-event timers, and the f32/bf16/f16 conversion kernels (bit-exact against the
// host conversions of kernels/common/bf16.h).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <limits>

#include "core/device_allocator.h"
#include "core/device_memory.h"
#include "ops/device_ops.h"

using namespace vgen;
using namespace vgen::testing;

TEST(DeviceAllocatorGpu, SizeClasses) {
  EXPECT_EQ(DeviceAllocator::round_size(0), 512u);
  EXPECT_EQ(DeviceAllocator::round_size(1), 512u);
  EXPECT_EQ(DeviceAllocator::round_size(513), 1024u);
  EXPECT_EQ(DeviceAllocator::round_size(size_t(1) << 20), size_t(1) << 20);
  EXPECT_EQ(DeviceAllocator::round_size((size_t(1) << 20) + 1), size_t(2) << 20);
  EXPECT_EQ(DeviceAllocator::round_size(size_t(5) << 20), size_t(6) << 20);
}

TEST(DeviceAllocatorGpu, ReusesFreedBlocksAndCounts) {
  VGEN_REQUIRE_GPU();
  DeviceAllocator& al = DeviceAllocator::instance();
  al.empty_cache();
  const DeviceAllocatorStats s0 = al.stats();
  EXPECT_EQ(s0.cached_bytes, 0u);

  const size_t n1 = (size_t(3) << 20) + 123;  // rounds to 4 MiB
  void* p1 = device_malloc(n1);
  DeviceAllocatorStats s1 = al.stats();
  EXPECT_EQ(s1.in_use_bytes, s0.in_use_bytes + n1);
  EXPECT_EQ(s1.reserved_bytes, s0.reserved_bytes + (size_t(4) << 20));
  EXPECT_EQ(s1.device_mallocs, s0.device_mallocs + 1);
  EXPECT_EQ(al.allocation_size(p1), n1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p1) % 256, 0u);
  device_free(p1);
  EXPECT_EQ(al.stats().in_use_bytes, s0.in_use_bytes);
  EXPECT_EQ(al.stats().cached_bytes, size_t(4) << 20);

  // Same class: the cached block comes back without cudaMalloc.
  void* p2 = device_malloc(size_t(3) << 20);
  DeviceAllocatorStats s2 = al.stats();
  EXPECT_EQ(p2, p1);
  EXPECT_EQ(s2.device_mallocs, s1.device_mallocs);
  EXPECT_EQ(s2.cache_hits, s1.cache_hits + 1);
  EXPECT_EQ(s2.cached_bytes, 0u);
  // A much smaller request must not take a large cached block.
  device_free(p2);
  void* p3 = device_malloc(1000);
  EXPECT_NE(p3, p1);
  EXPECT_EQ(al.stats().device_mallocs, s2.device_mallocs + 1);
  device_free(p3);

  // Peak tracks the high-water mark of bytes in use.
  al.reset_peak();
  const size_t base = al.stats().in_use_bytes;
  void* a = device_malloc(size_t(8) << 20);
  void* b = device_malloc(size_t(2) << 20);
  device_free(a);
  device_free(b);
  EXPECT_EQ(al.stats().peak_in_use_bytes, base + (size_t(10) << 20));
  EXPECT_GE(device_peak_bytes(), base + (size_t(10) << 20));

  al.empty_cache();
  const DeviceAllocatorStats s3 = al.stats();
  EXPECT_EQ(s3.cached_bytes, 0u);
  EXPECT_EQ(s3.in_use_bytes, s0.in_use_bytes);
  EXPECT_GT(s3.device_frees, s0.device_frees);
}

TEST(DeviceAllocatorGpu, TensorsRoundTripAndReuse) {
  VGEN_REQUIRE_GPU();
  auto v = random_vec(100003, 5);
  uint64_t mallocs_after_first = 0;
  for (int it = 0; it < 3; ++it) {
    Tensor d = Tensor::from_vector(v, {100003}).to(Device::kCUDA);
    Tensor c = d.clone();  // d2d on the compute stream
    std::vector<float> back = host_f32(c);
    ASSERT_EQ(back, v);
    if (it == 0)
      mallocs_after_first = DeviceAllocator::instance().stats().device_mallocs;
    else
      EXPECT_EQ(DeviceAllocator::instance().stats().device_mallocs, mallocs_after_first)
          << "iteration " << it << " did not reuse the freed blocks";
  }
  Tensor z = Tensor::zeros({77, 3}, DType::kBF16, Device::kCUDA);
  for (float x : host_f32(z)) ASSERT_EQ(x, 0.0f);
}

TEST(CudaStreamGpu, EventTimerMeasuresGpuWork) {
  VGEN_REQUIRE_GPU();
  Tensor big = Tensor::from_vector(random_vec(size_t(1) << 24, 9), {int64_t(1) << 24}).to(Device::kCUDA);
  CudaEventTimer t;
  t.start();
  for (int i = 0; i < 10; ++i) (void)cuda_cast(big, DType::kBF16);
  t.stop();
  const double s = t.seconds();
  EXPECT_GT(s, 0.0);
  EXPECT_LT(s, 10.0);
  t.start();
  t.stop();
  EXPECT_GE(t.total(), s);
  CudaEvent e;
  e.record();
  e.synchronize();
  EXPECT_TRUE(e.done());
  EXPECT_NE(compute_stream(), copy_stream());
}

TEST(ConvertGpu, BitExactWithHostConversions) {
  VGEN_REQUIRE_GPU();
  std::vector<float> v = random_vec(70001, 3, -100.0f, 100.0f);
  const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u, 0x80000123u,
                               0x007fffffu, 0x7f7fffffu, 0xff7fffffu, 0x3f808000u, 0x3f818000u, 0x3f80c000u,
                               0x477ff000u, 0x477fe000u, 0x33800000u, 0x38800000u, 0x387fc000u, 0x3f7fffffu};
  for (uint32_t u : specials) {
    float f;
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  const int64_t n = int64_t(v.size());
  Tensor d32 = Tensor::from_vector(v, {n}).to(Device::kCUDA);
  for (DType dt : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor host16 = Tensor::from_vector(v, {n}).to(dt);  // host reference
    Tensor dev16 = cuda_cast(d32, dt).to(Device::kCPU);
    const uint16_t* a = host16.data<uint16_t>();
    const uint16_t* b = dev16.data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a[i], b[i]) << "element " << i << " = " << v[size_t(i)];
    // Back to f32 on the device: exact.
    Tensor back = cuda_cast(cuda_cast(d32, dt), DType::kF32).to(Device::kCPU);
    Tensor hback = host16.to(DType::kF32);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back.f32()[i], hback.f32()[i]) << "element " << i;
  }
  // bf16 -> f16 through float.
  Tensor hb = Tensor::from_vector(v, {n}).to(DType::kBF16);
  Tensor dh = cuda_cast(hb.to(Device::kCUDA), DType::kF16).to(Device::kCPU);
  Tensor hh = hb.to(DType::kF16);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(dh.data<uint16_t>()[i], hh.data<uint16_t>()[i]) << "element " << i;
  // NaN stays NaN.
  Tensor nan = Tensor::from_vector({std::numeric_limits<float>::quiet_NaN()}, {1}).to(Device::kCUDA);
  EXPECT_TRUE(std::isnan(host_f32(cuda_cast(nan, DType::kBF16))[0]));
  // cast() dispatches by device.
  EXPECT_EQ(cast(d32, DType::kBF16).device(), Device::kCUDA);
  EXPECT_TRUE(cast(Tensor::from_vector(v, {n}), DType::kBF16).is_cpu());
}

#else
VGEN_GPU_TESTS_NEED_CUDA(DeviceMemoryGpu)
#endif
