// Internal to dist/weight_stream*.cpp: the reader threads and the two ways a segment's bytes are
// handed on (host memory over MPI, the device over the copy stream and NCCL).
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "dist/weight_stream_plan.h"

namespace vgen {

// One contiguous read: `bytes` at absolute offset `offset` of the open file `fd`.
struct ReadJob {
  int fd = -1;
  int file = 0;         // global file index (for messages)
  size_t offset = 0;    // absolute file offset
  size_t data_off = 0;  // the same in the data section
  size_t bytes = 0;
};

// Where the bytes of a segment go. The main thread calls, per segment in plan order, either
// own() (this rank read it into `buf`) or recv_buffer() (a peer sends it), then deliver().
class SegmentSink {
 public:
  virtual ~SegmentSink() = default;
  virtual void* alloc_buffer(size_t bytes) = 0;  // a read buffer (pinned for the device)
  virtual void free_buffer(void* p) = 0;
  // The bytes this rank read, as the tensor to send and deliver from. `reusable` is set to what a
  // reader must call before it overwrites `buf` (nothing when the bytes were consumed already).
  virtual Tensor own(const Segment& s, void* buf, std::function<void()>& reusable) = 0;
  virtual Tensor recv_buffer(const Segment& s) = 0;
  virtual void deliver(const Segment& s, const Tensor& bytes) = 0;
  // A point of the load's progress; seconds_at(mark) after finish() tells when it was reached.
  virtual int mark() = 0;
  virtual void finish() = 0;  // waits for every copy and conversion
  virtual double seconds_at(int mark) = 0;
};

// Device sink (weight_stream_cuda.cpp; throws kUsage in builds without CUDA): read buffers pinned,
// segments staged on the device over the copy stream. `deliver_to(s, base)` (base: the segment's
// first byte on the device) converts them into the requests they overlap.
std::unique_ptr<SegmentSink> make_device_sink(size_t cap, int buffers,
                                              std::function<void(const Segment&, const void* base)> deliver_to);
// dst.flat[dst_elem, dst_elem + n) = convert(src[0, n)) on the compute stream; src: device bytes of
// dtype src_dt (any alignment), dst: a device tensor of f32/bf16/f16.
void device_convert_into(const void* src, DType src_dt, const Tensor& dst, size_t dst_elem, size_t n);

// Reads jobs in order into `buffers` rotating buffers with `threads` threads; wait(k) returns the
// buffer holding job k once read (rethrowing a reader's error), release(k, reusable) hands its
// buffer back.
class ReaderPool {
 public:
  using Describe = std::function<std::string(const ReadJob&, size_t at)>;  // names the tensor at a data offset
  ReaderPool(std::vector<ReadJob> jobs, int threads, int buffers, size_t buffer_bytes, SegmentSink& sink,
             Describe describe);
  ~ReaderPool();
  void* wait(size_t k);
  void release(size_t k, std::function<void()> reusable);
  size_t bytes_read() const { return bytes_read_; }

 private:
  void work();
  void read_job(const ReadJob& j, char* dst) const;

  std::vector<ReadJob> jobs_;
  SegmentSink& sink_;
  Describe describe_;
  std::vector<void*> bufs_;
  std::vector<size_t> uses_;    // releases of each buffer so far
  std::vector<int64_t> filled_; // job a buffer holds once read, -1 none
  std::vector<std::function<void()>> reusable_;
  size_t next_ = 0;
  size_t bytes_read_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

}  // namespace vgen
