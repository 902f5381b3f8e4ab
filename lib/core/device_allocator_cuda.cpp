#include "core/device_allocator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/device_fault.h"
#include "core/error.h"

namespace vgen {

namespace {
constexpr size_t kSmallLimit = size_t(1) << 20;  // up to 1 MiB: 512-byte granularity
constexpr size_t kSmallRound = 512;
constexpr size_t kLargeRound = size_t(2) << 20;  // above: 2 MiB granularity

struct Block {
  size_t size = 0;       // rounded bytes held from cudaMalloc
  size_t requested = 0;  // bytes asked for by the live user (0 while cached)
  int device = 0;
  bool in_use = false;
};

std::string bytes_str(size_t b) { return fmt::format("{:.1f} MiB", double(b) / double(1 << 20)); }
}  // namespace

struct DeviceAllocator::Impl {
  mutable std::mutex mu;
  std::unordered_map<void*, Block> blocks;
  std::vector<std::multimap<size_t, void*>> free_lists;  // per device: rounded size -> block
  DeviceAllocatorStats st;

  std::multimap<size_t, void*>& free_list(int dev) {
    if (size_t(dev) >= free_lists.size()) free_lists.resize(size_t(dev) + 1);
    return free_lists[size_t(dev)];
  }

  void note_peaks() {
    st.peak_in_use_bytes = std::max(st.peak_in_use_bytes, st.in_use_bytes);
    st.peak_reserved_bytes = std::max(st.peak_reserved_bytes, st.reserved_bytes);
  }

  // Frees every cached block; the caller holds `mu`. Waits for the devices first, since a cached
  // block may still be read by queued work on the compute stream.
  void release_cached() {
    int cur = 0;
    cudaGetDevice(&cur);
    for (size_t dev = 0; dev < free_lists.size(); ++dev) {
      auto& fl = free_lists[dev];
      if (fl.empty()) continue;
      cudaSetDevice(int(dev));
      cudaDeviceSynchronize();
      for (auto& [size, p] : fl) {
        cudaFree(p);
        blocks.erase(p);
        st.reserved_bytes -= size;
        st.cached_bytes -= size;
        ++st.device_frees;
      }
      fl.clear();
    }
    cudaSetDevice(cur);
  }
};

DeviceAllocator::DeviceAllocator() : impl_(new Impl) {}

DeviceAllocator& DeviceAllocator::instance() {
  // Leaked on purpose: tensors may be released during static destruction, after which a destroyed
  // allocator (or an unloaded CUDA runtime) must not be touched.
  static DeviceAllocator* inst = new DeviceAllocator();
  return *inst;
}

size_t DeviceAllocator::round_size(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= kSmallLimit) return (bytes + kSmallRound - 1) / kSmallRound * kSmallRound;
  return (bytes + kLargeRound - 1) / kLargeRound * kLargeRound;
}

void* DeviceAllocator::allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const size_t rs = round_size(bytes);
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "device allocation of {} bytes: no CUDA device ({})", bytes, cudaGetErrorString(e));

  Impl& m = *impl_;
  std::lock_guard<std::mutex> lk(m.mu);
  ++m.st.allocations;
  auto& fl = m.free_list(dev);
  auto it = fl.lower_bound(rs);
  if (it != fl.end() && it->first <= rs + rs / 8) {
    void* p = it->second;
    fl.erase(it);
    Block& b = m.blocks.at(p);
    b.in_use = true;
    b.requested = bytes;
    m.st.cached_bytes -= b.size;
    m.st.in_use_bytes += bytes;
    ++m.st.cache_hits;
    m.note_peaks();
    return p;
  }

  void* p = nullptr;
  e = cudaMalloc(&p, rs);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear, release the cache and try once more
    m.release_cached();
    e = cudaMalloc(&p, rs);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    const std::string held = fmt::format("vgen holds {} in use, {} reserved", bytes_str(m.st.in_use_bytes),
                                         bytes_str(m.st.reserved_bytes));
    if (e == cudaErrorMemoryAllocation)
      throw_device_oom(fmt::format("a device allocation ({} rounded)", bytes_str(rs)), bytes, free_b, total_b, held);
    if (cuda_error_is_sticky(int(e)))
      throw_device_fault(cudaGetErrorName(e), cudaGetErrorString(e), fmt::format("cudaMalloc of {} bytes", bytes));
    VGEN_THROW(ExitCode::kInternal, "device memory allocation of {} bytes ({}) on device {} failed: {}; {}; device has {} "
               "free of {}",
               bytes, bytes_str(rs), dev, cudaGetErrorString(e), held, bytes_str(free_b), bytes_str(total_b));
  }
  device_fault_note_context();
  m.blocks[p] = Block{rs, bytes, dev, true};
  m.st.reserved_bytes += rs;
  m.st.in_use_bytes += bytes;
  ++m.st.device_mallocs;
  m.note_peaks();
  return p;
}

void DeviceAllocator::deallocate(void* p) {
  if (!p) return;
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lk(m.mu);
  auto it = m.blocks.find(p);
  VGEN_ASSERT(it != m.blocks.end() && it->second.in_use, "device_free of a pointer not from device_malloc");
  Block& b = it->second;
  m.st.in_use_bytes -= b.requested;
  m.st.cached_bytes += b.size;
  b.in_use = false;
  b.requested = 0;
  // Most recently freed first among equal sizes (still warm in L2; lower_bound finds it first).
  auto& fl = m.free_list(b.device);
  fl.emplace_hint(fl.lower_bound(b.size), b.size, p);
}

void DeviceAllocator::empty_cache() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  impl_->release_cached();
}

DeviceAllocatorStats DeviceAllocator::stats() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->st;
}

void DeviceAllocator::reset_peak() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  impl_->st.peak_in_use_bytes = impl_->st.in_use_bytes;
  impl_->st.peak_reserved_bytes = impl_->st.reserved_bytes;
}

size_t DeviceAllocator::allocation_size(const void* p) const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  auto it = impl_->blocks.find(const_cast<void*>(p));
  return it != impl_->blocks.end() && it->second.in_use ? it->second.requested : 0;
}

}  // namespace vgen
