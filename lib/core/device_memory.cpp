#include "core/device_memory.h"

#include "core/error.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#endif

namespace vgen {

#ifdef VGEN_WITH_CUDA
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "CUDA {} failed: {}", what, cudaGetErrorString(e));
}
std::mutex g_mu;
std::unordered_map<void*, size_t> g_sizes;
size_t g_cur = 0, g_peak = 0;
}  // namespace

bool cuda_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
void* device_malloc(size_t bytes) {
  void* p = nullptr;
  if (bytes == 0) bytes = 1;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "cudaMalloc of {} bytes failed: {}", bytes, cudaGetErrorString(e));
  std::lock_guard<std::mutex> lk(g_mu);
  g_sizes[p] = bytes;
  g_cur += bytes;
  if (g_cur > g_peak) g_peak = g_cur;
  return p;
}
void device_free(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto it = g_sizes.find(p);
    if (it != g_sizes.end()) {
      g_cur -= it->second;
      g_sizes.erase(it);
    }
  }
  cudaFree(p);
}
void memcpy_h2d(void* d, const void* s, size_t n) { check(cudaMemcpy(d, s, n, cudaMemcpyHostToDevice), "memcpy h2d"); }
void memcpy_d2h(void* d, const void* s, size_t n) { check(cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost), "memcpy d2h"); }
void memcpy_d2d(void* d, const void* s, size_t n) { check(cudaMemcpy(d, s, n, cudaMemcpyDeviceToDevice), "memcpy d2d"); }
void device_memset_zero(void* p, size_t n) { check(cudaMemset(p, 0, n), "memset"); }
size_t device_peak_bytes() {
  std::lock_guard<std::mutex> lk(g_mu);
  return g_peak;
}
#else
namespace {
[[noreturn]] void no_cuda() {
  VGEN_THROW(ExitCode::kUsage, "this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu");
}
}  // namespace
bool cuda_available() { return false; }
void* device_malloc(size_t) { no_cuda(); }
void device_free(void*) {}
void memcpy_h2d(void*, const void*, size_t) { no_cuda(); }
void memcpy_d2h(void*, const void*, size_t) { no_cuda(); }
void memcpy_d2d(void*, const void*, size_t) { no_cuda(); }
void device_memset_zero(void*, size_t) { no_cuda(); }
size_t device_peak_bytes() { return 0; }
#endif

}  // namespace vgen
