#include "core/cuda_stream.h"

#include "core/device_fault.h"
#include "core/error.h"
#include "core/no_cuda_error.h"
#include "core/wait_marker.h"

#ifdef VGEN_WITH_CUDA
#include <cuda_runtime.h>

#include <array>
#include <mutex>
#endif

namespace vgen {

#ifdef VGEN_WITH_CUDA
namespace {
constexpr int kMaxDevices = 64;
std::mutex g_stream_mu;
std::array<cudaStream_t, kMaxDevices> g_compute{};
std::array<cudaStream_t, kMaxDevices> g_copy{};

cudaStream_t get_stream(std::array<cudaStream_t, kMaxDevices>& table, unsigned flags) {
  int dev = cuda_current_device();
  VGEN_ASSERT(dev >= 0 && dev < kMaxDevices, "CUDA device index {} out of range", dev);
  std::lock_guard<std::mutex> lk(g_stream_mu);
  if (!table[size_t(dev)]) {
    cudaStream_t s = nullptr;
    VGEN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, flags));
    table[size_t(dev)] = s;  // lives until process exit (destroying it after the runtime unloads fails)
  }
  return table[size_t(dev)];
}
}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void cuda_set_device(int device) { VGEN_CUDA_CHECK(cudaSetDevice(device)); }

int cuda_current_device() {
  int d = 0;
  VGEN_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

cudaStream_t compute_stream() { return get_stream(g_compute, cudaStreamDefault); }
cudaStream_t copy_stream() { return get_stream(g_copy, cudaStreamNonBlocking); }
void sync_compute_stream() {
  cudaStream_t s = compute_stream();
  WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "stream sync");
  VGEN_CUDA_CHECK(cudaStreamSynchronize(s));
}
void device_synchronize() {
  WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "device sync");
  VGEN_CUDA_CHECK(cudaDeviceSynchronize());
}

void cuda_check_status(int code, const char* what) {
  if (code == int(cudaSuccess)) return;
  const cudaError_t e = cudaError_t(code);
  if (cuda_error_is_sticky(code)) throw_device_fault(cudaGetErrorName(e), cudaGetErrorString(e), what);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw_device_oom(fmt::format("CUDA call {}", what), 0, free_b, total_b, "");
  }
  VGEN_THROW(ExitCode::kInternal, "CUDA call {} failed: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

CudaEvent::CudaEvent(bool timing) {
  VGEN_CUDA_CHECK(cudaEventCreateWithFlags(&ev_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
CudaEvent::~CudaEvent() {
  if (ev_) cudaEventDestroy(ev_);
}
CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  if (this != &o) {
    if (ev_) cudaEventDestroy(ev_);
    ev_ = o.ev_;
    o.ev_ = nullptr;
  }
  return *this;
}
void CudaEvent::record(cudaStream_t stream) { VGEN_CUDA_CHECK(cudaEventRecord(ev_, stream)); }
void CudaEvent::wait_on(cudaStream_t stream) const { VGEN_CUDA_CHECK(cudaStreamWaitEvent(stream, ev_, 0)); }
void CudaEvent::synchronize() const {
  WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "event sync");
  VGEN_CUDA_CHECK(cudaEventSynchronize(ev_));
}
bool CudaEvent::done() const {
  cudaError_t e = cudaEventQuery(ev_);
  if (e == cudaErrorNotReady) return false;
  VGEN_CUDA_CHECK(e);
  return true;
}

CudaEventTimer::CudaEventTimer() {
  VGEN_CUDA_CHECK(cudaEventCreate(&begin_));
  VGEN_CUDA_CHECK(cudaEventCreate(&end_));
}
CudaEventTimer::~CudaEventTimer() {
  if (begin_) cudaEventDestroy(begin_);
  if (end_) cudaEventDestroy(end_);
}
void CudaEventTimer::start() { start(compute_stream()); }
void CudaEventTimer::start(cudaStream_t stream) {
  collect();
  stream_ = stream;
  VGEN_CUDA_CHECK(cudaEventRecord(begin_, stream_));
  running_ = true;
}
void CudaEventTimer::stop() {
  VGEN_ASSERT(running_, "CudaEventTimer::stop without start");
  VGEN_CUDA_CHECK(cudaEventRecord(end_, stream_));
  running_ = false;
  pending_ = true;
}
void CudaEventTimer::collect() {
  if (!pending_) return;
  {
    WaitScope wait(WaitOp::kGpuSync, WaitBackend::kCuda, "timer event");
    VGEN_CUDA_CHECK(cudaEventSynchronize(end_));
  }
  float ms = 0;
  VGEN_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
  last_ = double(ms) * 1e-3;
  total_ += last_;
  pending_ = false;
}
double CudaEventTimer::seconds() {
  collect();
  return last_;
}
double CudaEventTimer::total() {
  collect();
  return total_;
}

#else  // CPU-only build

int cuda_device_count() { return 0; }
void cuda_set_device(int) { throw_no_cuda("cuda_set_device"); }
int cuda_current_device() { throw_no_cuda("cuda_current_device"); }
cudaStream_t compute_stream() { throw_no_cuda("compute_stream"); }
cudaStream_t copy_stream() { throw_no_cuda("copy_stream"); }
void sync_compute_stream() {}
void device_synchronize() {}
void cuda_check_status(int code, const char* what) {
  if (code != 0) VGEN_THROW(ExitCode::kInternal, "CUDA call {} failed with code {}", what, code);
}

CudaEvent::CudaEvent(bool) { throw_no_cuda("CudaEvent"); }
CudaEvent::~CudaEvent() = default;
CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  ev_ = o.ev_;
  o.ev_ = nullptr;
  return *this;
}
void CudaEvent::record(cudaStream_t) { throw_no_cuda("CudaEvent::record"); }
void CudaEvent::wait_on(cudaStream_t) const { throw_no_cuda("CudaEvent::wait_on"); }
void CudaEvent::synchronize() const {}
bool CudaEvent::done() const { return true; }

// Host fallback: wall time between start and stop.
CudaEventTimer::CudaEventTimer() = default;
CudaEventTimer::~CudaEventTimer() = default;
void CudaEventTimer::start() { start(nullptr); }
void CudaEventTimer::start(cudaStream_t) {
  host_begin_ = std::chrono::steady_clock::now();
  running_ = true;
}
void CudaEventTimer::stop() {
  VGEN_ASSERT(running_, "CudaEventTimer::stop without start");
  last_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_begin_).count();
  total_ += last_;
  running_ = false;
}
void CudaEventTimer::collect() {}
double CudaEventTimer::seconds() { return last_; }
double CudaEventTimer::total() { return total_; }

#endif

}  // namespace vgen
