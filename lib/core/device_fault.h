// Device faults with what a user needs to act on them (issue 22):
// - out of device memory (DeviceOutOfMemory, exit 11): what was being allocated (the phase and the
//   size), the rank, its GPU and that GPU's free memory, `vgen plan`'s per-GPU estimate for the
//   recipe and a mesh or dwdp_size that fits (the advice comes from the pipeline, set_device_oom_advisor);
// - sticky CUDA errors (illegal address, launch failure, ECC, ...), after which the GPU context is
//   unusable: kDistributed (exit 8) naming the rank, so the launcher ends the whole job.
// Test hooks reach both paths without a GPU (README "Batch runs"):
//   VGEN_INJECT_OOM=load|step[@RANK]          out of memory while loading / in the first step
//   VGEN_INJECT_CUDA_FAULT=step[:N][@RANK]    a sticky fault in denoising step N (default 1)
// RANK limits the hook to one world rank (default: every rank).
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "core/error.h"

namespace vgen {

class DeviceOutOfMemory : public Error {
 public:
  DeviceOutOfMemory(const std::string& msg, size_t requested, size_t free_bytes, size_t total_bytes)
      : Error(ExitCode::kDeviceOutOfMemory, msg), requested_(requested), free_(free_bytes), total_(total_bytes) {}
  size_t requested() const { return requested_; }
  size_t free_bytes() const { return free_; }
  size_t total_bytes() const { return total_; }

 private:
  size_t requested_, free_, total_;
};

// What this thread allocates device memory for ("loading the model", "denoising step 3/30"), named in
// out-of-memory messages; nested phases read "outer: inner".
class DeviceAllocPhase {
 public:
  explicit DeviceAllocPhase(std::string what);
  ~DeviceAllocPhase();
  DeviceAllocPhase(const DeviceAllocPhase&) = delete;
  DeviceAllocPhase& operator=(const DeviceAllocPhase&) = delete;
  static std::string current();  // "" outside any phase
};

// The recipe's view of an out-of-memory: `vgen plan`'s estimate per GPU and, given the GPU's total
// bytes, a mesh or dwdp_size whose estimate fits (text for the message).
struct DeviceOomAdvice {
  double estimate_bytes = 0;
  std::string text;
};
using DeviceOomAdvisor = std::function<DeviceOomAdvice(size_t device_total_bytes)>;
void set_device_oom_advisor(DeviceOomAdvisor advisor);  // empty: no advice

// Throws DeviceOutOfMemory with the full message: `what` failed for `requested` bytes (0: unknown)
// with `free_bytes` of `total_bytes` free on this rank's GPU; `held` says what vgen holds.
[[noreturn]] void throw_device_oom(const std::string& what, size_t requested, size_t free_bytes,
                                   size_t total_bytes, const std::string& held);

// A CUDA error code that leaves the context unusable (every later call fails with it).
bool cuda_error_is_sticky(int code);
// Throws kDistributed naming the rank, its GPU and the error: the job has to end.
[[noreturn]] void throw_device_fault(const std::string& error_name, const std::string& error_text,
                                     const std::string& what);
// The sticky error this process's GPU context holds, as "name: text"; "" when none (or no context).
std::string cuda_sticky_error();
// Called by the device allocator once this process uses its GPU (a context exists to query).
void device_fault_note_context();

// Test hooks (file comment): at `site` ("load" or "step"; `step` 1-based for "step").
void device_fault_inject(const char* site, int step = 0);

}  // namespace vgen
