// Caching allocator for device memory (CUDA builds; core/device_memory.h routes through it).
//
// cudaMalloc/cudaFree are slow and cudaFree synchronises the device, so freed blocks are kept in
// per-device free lists keyed by their rounded size and handed out again. Sizes are rounded to
// 512 B up to 1 MiB and to 2 MiB above; a request takes the smallest cached block of at least its
// rounded size and at most 1/8 larger. Reuse is stream-ordered on compute_stream() (core/cuda_stream.h):
// a block freed on the host may still be read by queued kernels, and the next user is queued after
// them on the same stream. Work on another stream must be joined to the compute stream (an event)
// before its buffers are released. When cudaMalloc fails the cache is released and the call retried.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vgen {

struct DeviceAllocatorStats {
  size_t in_use_bytes = 0;         // requested bytes of live blocks
  size_t peak_in_use_bytes = 0;    // since start or reset_peak()
  size_t reserved_bytes = 0;       // rounded bytes held from cudaMalloc (live + cached)
  size_t peak_reserved_bytes = 0;  // since start or reset_peak()
  size_t cached_bytes = 0;         // rounded bytes of cached (free) blocks
  uint64_t allocations = 0;        // allocate() calls
  uint64_t cache_hits = 0;         // allocate() calls served from the free lists
  uint64_t device_mallocs = 0;     // cudaMalloc calls
  uint64_t device_frees = 0;       // cudaFree calls
};

class DeviceAllocator {
 public:
  static DeviceAllocator& instance();  // process-wide, never destroyed

  // A block of at least `bytes` (0 counts as 1) on the current device, 256-byte aligned.
  // Throws DeviceOutOfMemory (core/device_fault.h) with the memory state when the device is out of
  // memory, kDistributed on a sticky CUDA error.
  void* allocate(size_t bytes);
  // Returns a block from allocate() to the cache; null is ignored; unknown pointers are an error.
  void deallocate(void* p);
  // cudaFree of every cached block (all devices).
  void empty_cache();

  DeviceAllocatorStats stats() const;
  void reset_peak();
  // Requested size of a live block (0 when p is unknown).
  size_t allocation_size(const void* p) const;

  static size_t round_size(size_t bytes);

  struct Impl;

 private:
  DeviceAllocator();
  Impl* impl_;
};

}  // namespace vgen
