// The device side of dist/weight_stream.h: pinned read buffers, segments staged on the device over
// the copy stream, conversions (and NCCL hand-offs) on the compute stream.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/wait_marker.h"
#include "dist/weight_stream_io.h"
#include "kernels/common/convert.cuh"

namespace vgen {
namespace {

constexpr size_t kAlign = 256;  // a segment sits at slot + (begin mod 256): device addresses keep file alignment

kern::FloatType float_type(DType dt) {
  switch (dt) {
    case DType::kF32: return kern::FloatType::kF32;
    case DType::kBF16: return kern::FloatType::kBF16;
    case DType::kF16: return kern::FloatType::kF16;
    default: VGEN_THROW(ExitCode::kInternal, "weight stream: {} is not a float dtype", dtype_name(dt));
  }
}

Tensor device_view(void* p, size_t n) {
  auto st = std::make_shared<Storage>();
  st->ptr = p;
  st->bytes = n;
  st->device = Device::kCUDA;
  return Tensor::from_storage(st, 0, {int64_t(n)}, DType::kU8);
}

class DeviceSink final : public SegmentSink {
 public:
  DeviceSink(size_t cap, int buffers, std::function<void(const Segment&, const void*)> deliver_to)
      : deliver_to_(std::move(deliver_to)), start_(true) {
    const int slots = std::max(2, buffers);
    for (int i = 0; i < slots; ++i) {
      slots_.push_back(Tensor::empty({int64_t(cap + kAlign)}, DType::kU8, Device::kCUDA));
      done_.emplace_back(false);
    }
    start_.record(compute_stream());
  }
  ~DeviceSink() override {
    try {
      finish();
    } catch (...) {
    }
  }

  void* alloc_buffer(size_t bytes) override {
    void* p = nullptr;
    VGEN_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    return p;
  }
  void free_buffer(void* p) override { cudaFreeHost(p); }

  Tensor own(const Segment& s, void* buf, std::function<void()>& reusable) override {
    const size_t n = s.end - s.begin;
    char* base = next_slot(s);
    cudaStream_t cs = copy_stream();
    done_[size_t(cur_)].wait_on(cs);  // the slot's previous segment is sent and converted
    VGEN_CUDA_CHECK(cudaMemcpyAsync(base, buf, n, cudaMemcpyHostToDevice, cs));
    auto copied = std::make_shared<CudaEvent>(false);
    copied->record(cs);
    copied->wait_on(compute_stream());
    reusable = [copied] { copied->synchronize(); };
    return device_view(base, n);
  }

  Tensor recv_buffer(const Segment& s) override { return device_view(next_slot(s), s.end - s.begin); }

  void deliver(const Segment& s, const Tensor& bytes) override { deliver_to_(s, bytes.raw()); }

  int mark() override {
    marks_.emplace_back(true);
    marks_.back().record(compute_stream());
    return int(marks_.size()) - 1;
  }

  void finish() override {
    {
      WaitScope waiting(WaitOp::kGpuSync, WaitBackend::kCuda, "load copies");
      VGEN_CUDA_CHECK(cudaStreamSynchronize(copy_stream()));
    }
    sync_compute_stream();
  }

  double seconds_at(int m) override {
    float ms = 0;
    VGEN_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), marks_[size_t(m)].get()));
    return double(ms) / 1000.0;
  }

 private:
  // The next staging slot; the previous one is marked free once the work queued on it so far is done.
  char* next_slot(const Segment& s) {
    if (cur_ >= 0) done_[size_t(cur_)].record(compute_stream());
    cur_ = (cur_ + 1) % int(slots_.size());
    return static_cast<char*>(slots_[size_t(cur_)].raw()) + s.begin % kAlign;
  }

  std::function<void(const Segment&, const void*)> deliver_to_;
  std::vector<Tensor> slots_;
  std::vector<CudaEvent> done_;
  std::vector<CudaEvent> marks_;
  CudaEvent start_;
  int cur_ = -1;
};

}  // namespace

std::unique_ptr<SegmentSink> make_device_sink(size_t cap, int buffers,
                                              std::function<void(const Segment&, const void*)> deliver_to) {
  return std::make_unique<DeviceSink>(cap, buffers, std::move(deliver_to));
}

void device_convert_into(const void* src, DType src_dt, const Tensor& dst, size_t dst_elem, size_t n) {
  VGEN_ASSERT(dst.device() == Device::kCUDA && dst_elem + n <= size_t(dst.numel()),
              "weight stream: elements [{}, {}) into {}", dst_elem, dst_elem + n, dst.str());
  if (n == 0) return;
  char* out = static_cast<char*>(const_cast<void*>(dst.raw())) + dst_elem * dtype_size(dst.dtype());
  cudaStream_t cs = compute_stream();
  if (src_dt == dst.dtype()) {
    VGEN_CUDA_CHECK(cudaMemcpyAsync(out, src, n * dtype_size(src_dt), cudaMemcpyDeviceToDevice, cs));
    return;
  }
  Tensor aligned;  // a tensor at an odd offset of its file is copied to an aligned buffer first
  if (reinterpret_cast<uintptr_t>(src) % dtype_size(src_dt) != 0) {
    aligned = Tensor::empty({int64_t(n)}, src_dt, Device::kCUDA);
    VGEN_CUDA_CHECK(cudaMemcpyAsync(aligned.raw(), src, n * dtype_size(src_dt), cudaMemcpyDeviceToDevice, cs));
    src = aligned.raw();
  }
  VGEN_CUDA_CHECK(kern::convert_float(src, float_type(src_dt), out, float_type(dst.dtype()), int64_t(n), cs));
}

}  // namespace vgen
