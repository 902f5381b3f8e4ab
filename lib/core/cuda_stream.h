// CUDA streams, events and GPU phase timers of this process.
// The header needs no CUDA headers, so code built in both configurations can hold streams and timers.
// Without the CUDA backend the stream functions throw kUsage and CudaEventTimer measures host time.
//
// Ordering contract of the GPU path: every kernel, device copy (core/device_memory.h) and NCCL
// collective runs on compute_stream() unless a caller says otherwise; the caching allocator
// (core/device_allocator.h) reuses freed blocks in that stream's order. Work on another stream
// (copy_stream(), a communicator's side stream) is joined back with a CudaEvent before its buffers
// are released.
#pragma once
#include <chrono>

// Same typedefs as cuda_runtime_api.h (a repeated identical typedef is valid C++).
struct CUstream_st;
struct CUevent_st;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

namespace vgen {

// Number of CUDA devices visible to this process; 0 without the backend or without a device.
int cuda_device_count();
void cuda_set_device(int device);
int cuda_current_device();

// The stream all GPU work of this process runs on (one per device, created on first use). It is a
// blocking stream: it also orders against work on the legacy default stream.
cudaStream_t compute_stream();
// A non-blocking stream for copies that overlap compute; join it with a CudaEvent.
cudaStream_t copy_stream();
void sync_compute_stream();
void device_synchronize();

// Throws vgen::Error naming `what` when `code` (a cudaError_t) is not cudaSuccess: kDistributed for a
// sticky error (the context is lost), DeviceOutOfMemory for cudaErrorMemoryAllocation, else kInternal
// (core/device_fault.h).
void cuda_check_status(int code, const char* what);
#define VGEN_CUDA_CHECK(expr) ::vgen::cuda_check_status(static_cast<int>(expr), #expr)

// RAII CUDA event (no timing unless asked).
class CudaEvent {
 public:
  explicit CudaEvent(bool timing = false);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& o) noexcept : ev_(o.ev_) { o.ev_ = nullptr; }
  CudaEvent& operator=(CudaEvent&& o) noexcept;

  void record(cudaStream_t stream);
  void record() { record(compute_stream()); }
  void wait_on(cudaStream_t stream) const;  // `stream` waits for this event (no host block)
  void synchronize() const;                 // host waits
  bool done() const;                        // query without blocking
  cudaEvent_t get() const { return ev_; }

 private:
  cudaEvent_t ev_ = nullptr;
};

// Time of a GPU phase: start() and stop() record events on a stream, seconds() waits for the stop
// event and returns the elapsed GPU time. Several start/stop pairs accumulate (total()).
// Without the backend it measures host wall time between start() and stop().
class CudaEventTimer {
 public:
  CudaEventTimer();
  ~CudaEventTimer();
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void start();
  void start(cudaStream_t stream);
  void stop();
  // Seconds between the last start() and stop(); waits for the GPU to reach the stop event.
  double seconds();
  // Sum over all completed start/stop pairs (each waited for).
  double total();

 private:
  void collect();
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool running_ = false, pending_ = false;
  double last_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point host_begin_;
};

}  // namespace vgen
