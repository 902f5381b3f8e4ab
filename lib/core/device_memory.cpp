#include "core/device_memory.h"

#include "core/error.h"
#include "core/no_cuda_error.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>

#include <exception>

#include "core/cuda_stream.h"
#include "core/device_allocator.h"
#include "core/device_fault.h"
#include "core/log.h"
#include "core/wait_marker.h"
#endif

namespace vgen {

#ifdef VGEN_WITH_CUDA
// Allocations go through the caching allocator; copies and memsets run on the compute stream
// (core/cuda_stream.h) so they are ordered with the kernels and collectives queued there.
// Host-visible copies (h2d, d2h) wait for the stream; d2d and memset stay asynchronous.
namespace {
void check(cudaError_t e, const char* what, size_t bytes) {
  if (e == cudaSuccess) return;
  if (cuda_error_is_sticky(int(e)))
    throw_device_fault(cudaGetErrorName(e), cudaGetErrorString(e), fmt::format("{} of {} bytes", what, bytes));
  VGEN_THROW(ExitCode::kInternal, "CUDA {} of {} bytes failed: {}", what, bytes, cudaGetErrorString(e));
}
}  // namespace

bool cuda_available() { return cuda_device_count() > 0; }
void* device_malloc(size_t bytes) { return DeviceAllocator::instance().allocate(bytes); }
void device_free(void* p) {
  // Called from Storage destructors: never throw out of here.
  try {
    DeviceAllocator::instance().deallocate(p);
  } catch (const std::exception& e) {
    log_error("device_free: {}", e.what());
  }
}
void memcpy_h2d(void* d, const void* s, size_t n) {
  if (n == 0) return;
  cudaStream_t st = compute_stream();
  check(cudaMemcpyAsync(d, s, n, cudaMemcpyHostToDevice, st), "memcpy h2d", n);
  WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "memcpy h2d");
  check(cudaStreamSynchronize(st), "memcpy h2d (sync)", n);
}
void memcpy_d2h(void* d, const void* s, size_t n) {
  if (n == 0) return;
  cudaStream_t st = compute_stream();
  check(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToHost, st), "memcpy d2h", n);
  WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "memcpy d2h");
  check(cudaStreamSynchronize(st), "memcpy d2h (sync)", n);
}
void memcpy_d2d(void* d, const void* s, size_t n) {
  if (n == 0) return;
  check(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, compute_stream()), "memcpy d2d", n);
}
void device_memset_zero(void* p, size_t n) {
  if (n == 0) return;
  check(cudaMemsetAsync(p, 0, n, compute_stream()), "memset", n);
}
size_t device_peak_bytes() { return DeviceAllocator::instance().stats().peak_in_use_bytes; }
#else
bool cuda_available() { return false; }
void* device_malloc(size_t) { throw_no_cuda("device_malloc"); }
void device_free(void*) {}
void memcpy_h2d(void*, const void*, size_t) { throw_no_cuda("memcpy_h2d"); }
void memcpy_d2h(void*, const void*, size_t) { throw_no_cuda("memcpy_d2h"); }
void memcpy_d2d(void*, const void*, size_t) { throw_no_cuda("memcpy_d2d"); }
void device_memset_zero(void*, size_t) { throw_no_cuda("device_memset_zero"); }
size_t device_peak_bytes() { return 0; }
#endif

}  // namespace vgen
